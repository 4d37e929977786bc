"""Unblur: blur estimation (none / Gaussian / motion) and deconvolution, measured against the
sharp original (PSNR over all RGB channels)."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from skimage import data

from pixelmill.engines.base import EngineInputs, ImageArray
from pixelmill.engines.deblur import UnblurEngine, UnblurParams, estimate_blur_sigma
from pixelmill.engines.deblur.kernels import (
    gaussian_kernel,
    kernel_shape,
    line_kernel,
    random_walk_kernel,
)
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


def shake(img: ImageArray, kernel: npt.NDArray[np.float64], noise: float = 1.5) -> ImageArray:
    """Convolve with ``kernel`` (mirrored borders), add seeded Gaussian noise, round."""
    out = cv2.filter2D(
        img.astype(np.float64), -1, kernel[::-1, ::-1].copy(), borderType=cv2.BORDER_REFLECT
    )
    out = out + np.random.default_rng(7).normal(0.0, noise, out.shape)
    return np.asarray(np.clip(out + 0.5, 0, 255), dtype=np.uint8)


@pytest.mark.parametrize(("name", "min_gain"), [("astronaut", 3.5), ("coffee", 1.8)])
def test_linear_motion_blur_is_found_and_undone(name: str, min_gain: float) -> None:
    """15 px at 30°, noise 1.5 grey levels. Measured gains: astronaut +4.68, coffee +2.53 dB
    (margins about 75 % of that)."""
    sharp = photo(name)
    blurred = shake(sharp, line_kernel(15.0, 30.0))
    result = ENGINE.run(EngineInputs(blurred), UnblurParams())
    out = result.images[0].pixels
    assert out.shape == sharp.shape and out.dtype == np.uint8
    details = result.details
    assert details["blur"] == "motion"
    assert abs(details["length"] - 15.0) < 3.0
    assert abs((details["angle_deg"] - 30.0 + 90.0) % 180.0 - 90.0) < 8.0
    assert "motion kernel" in details["method"]
    assert psnr(out, sharp) - psnr(blurred, sharp) > min_gain


@pytest.mark.parametrize(("name", "min_gain"), [("coffee", 2.3), ("chelsea", 1.0)])
def test_curved_camera_shake_is_undone(name: str, min_gain: float) -> None:
    """A random-walk trajectory of 14 px (fixed seed). Measured gains: coffee +3.29, chelsea
    +1.53 dB."""
    sharp = photo(name)
    kernel = random_walk_kernel(14.0, np.random.default_rng(11), curvature=1.5)
    blurred = shake(sharp, kernel)
    result = ENGINE.run(EngineInputs(blurred), UnblurParams())
    assert result.details["blur"] == "motion"
    assert psnr(result.images[0].pixels, sharp) - psnr(blurred, sharp) > min_gain


@pytest.mark.parametrize(("name", "min_gain"), [("astronaut", 2.5), ("coffee", 1.2)])
def test_gaussian_blur_sigma_2_is_undone(name: str, min_gain: float) -> None:
    """Measured gains: astronaut +4.04, coffee +1.81 dB."""
    sharp = photo(name)
    blurred = blur(sharp, 2.0)
    result = ENGINE.run(EngineInputs(blurred), UnblurParams())
    assert result.details["blur"] == "gaussian"
    assert abs(result.details["estimated_sigma"] - 2.0) < 0.3
    assert result.details["sigma"] == pytest.approx(
        0.9 * result.details["estimated_sigma"], abs=0.01
    )
    assert psnr(result.images[0].pixels, sharp) - psnr(blurred, sharp) > min_gain
    assert "Gaussian PSF" in result.details["method"]


@pytest.mark.parametrize("name", ["chelsea", "astronaut", "coffee"])
def test_sharp_photo_is_returned_unchanged(name: str) -> None:
    sharp = photo(name)
    result = ENGINE.run(EngineInputs(sharp), UnblurParams())
    assert result.details["blur"] == "none"
    assert "no blur detected" in result.details["method"]
    assert np.array_equal(result.images[0].pixels, sharp)


@pytest.mark.parametrize("sigma", [1.5, 3.0])
def test_sigma_estimate_tracks_the_true_blur(sigma: float) -> None:
    y = luminance(blur(photo("astronaut"), sigma)) * 255.0
    assert abs(estimate_blur_sigma(y) - sigma) < 0.35


def test_estimate_is_robust_to_noise() -> None:
    rng = np.random.default_rng(3)
    blurred = blur(photo("coffee"), 2.0).astype(np.float64)
    noisy = np.asarray(np.clip(blurred + rng.normal(0, 5, blurred.shape), 0, 255), np.uint8)
    assert abs(estimate_blur_sigma(luminance(noisy) * 255.0) - 2.0) < 0.4


def test_given_sigma_overrides_the_estimate_and_alpha_is_kept() -> None:
    rgb = blur(photo("coffee"), 2.0)
    alpha = np.full(rgb.shape[:2], 200, np.uint8)
    result = ENGINE.run(EngineInputs(np.dstack([rgb, alpha])), UnblurParams(sigma=2.0))
    assert result.details["blur_source"] == "parameter"
    assert result.details["sigma"] == 2.0
    assert np.array_equal(result.images[0].pixels[..., 3], alpha)


def test_kernel_shapes() -> None:
    line = kernel_shape(line_kernel(20.0, 45.0))
    assert line.line_length == pytest.approx(20.0, abs=1.0)
    assert line.angle_deg == pytest.approx(45.0, abs=1.0)
    assert line.elongation > 10
    g = gaussian_kernel(2.0)
    assert g.sum() == pytest.approx(1.0)
    assert kernel_shape(g).elongation == pytest.approx(1.0, abs=0.01)


@pytest.mark.parametrize("size", [(300, 300), (40, 60)])
def test_flat_or_tiny_images_come_back_unchanged(size: tuple[int, int]) -> None:
    flat = np.full((*size, 3), 128, np.uint8)
    result = ENGINE.run(EngineInputs(flat), UnblurParams())
    assert result.details["blur"] == "none"
    assert np.array_equal(result.images[0].pixels, flat)
