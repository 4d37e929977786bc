"""Enhancement: variants, ranking and the quality score, on real photographs."""

from __future__ import annotations

import numpy as np
from skimage import data

from pixelmill.engines.base import EngineInputs, ImageArray
from pixelmill.engines.enhance import EnhanceEngine, EnhanceParams
from pixelmill.engines.enhance.quality import quality_score
from pixelmill.engines.runtime.measures import luminance, noise_sigma


def photo(name: str) -> ImageArray:
    """A scikit-image sample photo (bundled with the package, no network) as RGB uint8."""
    img = np.asarray(getattr(data, name)(), dtype=np.uint8)
    return np.ascontiguousarray(np.dstack([img] * 3)) if img.ndim == 2 else img


ENGINE = EnhanceEngine()


def _degrade(img: ImageArray, gain: float, offset: float) -> ImageArray:
    return np.asarray(np.clip(img.astype(np.float32) * gain + offset, 0, 255), dtype=np.uint8)


def test_dark_low_contrast_photo_is_improved() -> None:
    dark = _degrade(photo("coffee"), 0.35, 12.0)  # mean luminance about 0.18, contrast crushed
    result = ENGINE.run(EngineInputs(dark), EnhanceParams())
    d = result.details
    assert len(d["variants"]) >= 4
    assert len(result.images) == len(d["variants"])
    scores = [img.score if img.score is not None else float("nan") for img in result.images]
    assert not any(np.isnan(scores))
    assert scores == sorted(scores, reverse=True)  # best first
    assert [img.label for img in result.images] == [v["label"] for v in d["variants"]]
    assert result.images[0].label == d["chosen"]
    assert d["score"] - d["original_score"] > 15.0
    best = result.images[0].pixels
    assert best.shape == dark.shape and best.dtype == np.uint8
    assert luminance(best).mean() > luminance(dark).mean() + 0.15
    assert luminance(best).std() > 1.5 * luminance(dark).std()
    assert "no neural" in d["method"]


def test_noisy_photo_prefers_the_denoised_variant() -> None:
    rng = np.random.default_rng(7)
    clean = photo("astronaut")
    noisy = np.asarray(np.clip(clean + rng.normal(0, 12, clean.shape), 0, 255), dtype=np.uint8)
    result = ENGINE.run(EngineInputs(noisy), EnhanceParams(face_enhance=False))
    assert result.details["chosen"] == "Denoise"
    assert noise_sigma(result.images[0].pixels) < 0.6 * noise_sigma(noisy)


def test_face_variant_only_when_a_face_is_found() -> None:
    with_face = ENGINE.run(EngineInputs(photo("astronaut")), EnhanceParams())
    labels = {v["label"] for v in with_face.details["variants"]}
    assert "Face Enhance" in labels and with_face.details["faces_found"] is True
    without = ENGINE.run(EngineInputs(photo("chelsea")), EnhanceParams())
    assert "Face Enhance" not in {v["label"] for v in without.details["variants"]}
    disabled = ENGINE.run(EngineInputs(photo("astronaut")), EnhanceParams(face_enhance=False))
    assert "Face Enhance" not in {v["label"] for v in disabled.details["variants"]}


def test_alpha_channel_is_kept() -> None:
    rgb = _degrade(photo("chelsea"), 0.5, 0.0)
    alpha = np.zeros(rgb.shape[:2], np.uint8)
    alpha[50:250, 100:350] = 255
    result = ENGINE.run(EngineInputs(np.dstack([rgb, alpha])), EnhanceParams(face_enhance=False))
    for img in result.images:
        assert img.pixels.shape == (*rgb.shape[:2], 4)
        assert np.array_equal(img.pixels[..., 3], alpha)


def test_score_penalises_degradation_and_over_processing() -> None:
    img = photo("coffee")
    good = quality_score(img, original=img).total
    assert quality_score(_degrade(img, 0.35, 12.0)).total < good - 20
    # Posterised to 3 levels per channel: raw contrast goes up, but the structure and colour
    # departure penalties must still rank it below the untouched photo.
    poster = np.asarray((img // 96) * 110, dtype=np.uint8)
    assert quality_score(poster, original=img).total < good - 10
