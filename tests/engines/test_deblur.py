"""Unblur: blur estimation and deconvolution measured against the sharp original (PSNR)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from skimage import data

from pixelmill.engines.base import EngineInputs, ImageArray
from pixelmill.engines.deblur import UnblurEngine, UnblurParams, estimate_blur_sigma
from pixelmill.engines.runtime.measures import luminance

ENGINE = UnblurEngine()


def photo(name: str) -> ImageArray:
    """A scikit-image sample photo (bundled with the package, no network) as RGB uint8."""
    img = np.asarray(getattr(data, name)(), dtype=np.uint8)
    return np.ascontiguousarray(np.dstack([img] * 3)) if img.ndim == 2 else img


def psnr(a: ImageArray, b: ImageArray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return float(10.0 * np.log10(255.0**2 / mse))


def blur(img: ImageArray, sigma: float) -> ImageArray:
    return np.asarray(cv2.GaussianBlur(img, (0, 0), sigma), dtype=np.uint8)


@pytest.mark.parametrize(("name", "min_gain"), [("astronaut", 2.5), ("coffee", 1.2)])
def test_gaussian_blur_sigma_2_is_undone(name: str, min_gain: float) -> None:
    sharp = photo(name)
    blurred = blur(sharp, 2.0)
    result = ENGINE.run(EngineInputs(blurred), UnblurParams())
    out = result.images[0].pixels
    assert out.shape == sharp.shape and out.dtype == np.uint8
    assert abs(result.details["estimated_sigma"] - 2.0) < 0.3
    assert result.details["sigma_used"] == pytest.approx(
        0.85 * result.details["estimated_sigma"], abs=0.01
    )
    assert psnr(out, sharp) - psnr(blurred, sharp) > min_gain
    assert "Wiener" in result.details["method"]


@pytest.mark.parametrize("sigma", [1.5, 3.0])
def test_sigma_estimate_tracks_the_true_blur(sigma: float) -> None:
    y = luminance(blur(photo("astronaut"), sigma)) * 255.0
    assert abs(estimate_blur_sigma(y) - sigma) < 0.35


def test_estimate_is_robust_to_noise() -> None:
    rng = np.random.default_rng(3)
    blurred = blur(photo("coffee"), 2.0).astype(np.float64)
    noisy = np.asarray(np.clip(blurred + rng.normal(0, 5, blurred.shape), 0, 255), np.uint8)
    assert abs(estimate_blur_sigma(luminance(noisy) * 255.0) - 2.0) < 0.4


def test_sharp_photo_is_left_nearly_alone() -> None:
    sharp = photo("chelsea")
    result = ENGINE.run(EngineInputs(sharp), UnblurParams())
    assert result.details["estimated_sigma"] < 0.5
    assert "no deconvolution" in result.details["method"]
    assert psnr(result.images[0].pixels, sharp) > 38.0


def test_given_sigma_overrides_the_estimate_and_alpha_is_kept() -> None:
    rgb = blur(photo("coffee"), 2.0)
    alpha = np.full(rgb.shape[:2], 200, np.uint8)
    result = ENGINE.run(EngineInputs(np.dstack([rgb, alpha])), UnblurParams(sigma=2.0))
    assert result.details["sigma_source"] == "parameter"
    assert result.details["sigma_used"] == 2.0
    assert np.array_equal(result.images[0].pixels[..., 3], alpha)
