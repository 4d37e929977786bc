"""Colorize: colour appears, lightness is kept, a reference beats the grey input in PSNR."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError
from skimage import data

from pixelmill.engines.base import EngineError, EngineInputs, ImageArray
from pixelmill.engines.colorize import ColorizeEngine, ColorizeParams
from pixelmill.engines.runtime.colour import from_lab, to_lab
from pixelmill.engines.runtime.measures import colourfulness

ENGINE = ColorizeEngine()


def photo(name: str) -> ImageArray:
    """A scikit-image sample photo (bundled with the package, no network) as RGB uint8."""
    img = np.asarray(getattr(data, name)(), dtype=np.uint8)
    return np.ascontiguousarray(np.dstack([img] * 3)) if img.ndim == 2 else img


def to_grey(rgb: ImageArray) -> ImageArray:
    """The CIELAB lightness of ``rgb`` as a neutral grey RGB image."""
    lab = to_lab(rgb)
    lab[..., 1:] = 0.0
    return from_lab(lab)


def psnr(a: ImageArray, b: ImageArray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return float(10.0 * np.log10(255.0**2 / mse))


@pytest.mark.parametrize("name", ["camera", "astronaut", "coffee"])
def test_default_adds_colour_and_keeps_lightness(name: str) -> None:
    grey = to_grey(photo(name))
    result = ENGINE.run(EngineInputs(grey), ColorizeParams())
    out = result.images[0].pixels
    assert colourfulness(grey) < 1.0
    assert colourfulness(out) > 12.0
    lightness_change = np.abs(to_lab(out)[..., 0] - to_lab(grey)[..., 0])
    assert float(np.percentile(lightness_change, 99)) < 2.0
    assert result.details["input_was_color"] is False
    assert result.details["mode"] == "default"
    assert "not a learned" in result.details["method"]


def test_sky_is_coloured_blue_in_the_cameraman() -> None:
    result = ENGINE.run(EngineInputs(photo("camera")), ColorizeParams())
    assert "sky" in result.details["palette"]
    top_left = to_lab(result.images[0].pixels)[10:60, 10:150]  # open sky in the photo
    assert float(top_left[..., 2].mean()) < -5.0  # b* negative: blue


@pytest.mark.parametrize(("name", "min_gain"), [("astronaut", 5.0), ("coffee", 10.0)])
def test_reference_transfer_beats_the_grey_input(name: str, min_gain: float) -> None:
    original = photo(name)
    grey = to_grey(original)
    result = ENGINE.run(EngineInputs(grey, {"reference": original}), ColorizeParams())
    assert result.details["mode"] == "reference"
    assert psnr(result.images[0].pixels, original) > psnr(grey, original) + min_gain
    assert colourfulness(result.images[0].pixels) > colourfulness(grey) + 15.0


def test_reference_from_another_photo_still_colours() -> None:
    grey = to_grey(photo("chelsea"))
    result = ENGINE.run(EngineInputs(grey, {"reference": photo("coffee")}), ColorizeParams())
    assert colourfulness(result.images[0].pixels) > 10.0


def test_palette_colours_go_to_the_lightness_bands_matching_their_own_lightness() -> None:
    grey = to_grey(photo("camera"))
    params = ColorizeParams(palette=["#ff3030", "#3030ff"])
    result = ENGINE.run(EngineInputs(grey), params)
    lab = to_lab(result.images[0].pixels)
    lightness = lab[..., 0]
    dark = lightness < np.percentile(lightness, 15)
    light = lightness > np.percentile(lightness, 85)
    # Pure blue is darker than this red in L*, so blue goes to the shadows, red to the lights.
    assert float(lab[..., 2][dark].mean()) < -10.0  # blue: b* strongly negative
    assert float(lab[..., 1][light].mean()) > 15.0  # red: a* strongly positive
    assert result.details["mode"] == "palette"


def test_colour_input_is_reduced_to_grey_first_but_sepia_counts_as_grey() -> None:
    colour = photo("chelsea")
    result = ENGINE.run(EngineInputs(colour), ColorizeParams())
    assert result.details["input_was_color"] is True
    assert "note" in result.details
    c = photo("camera").astype(np.float32)
    sepia = np.asarray(np.clip(c * np.array([1.0, 0.85, 0.62]), 0, 255), dtype=np.uint8)
    assert ENGINE.run(EngineInputs(sepia), ColorizeParams()).details["input_was_color"] is False


def test_bad_palette_and_grey_reference_are_rejected() -> None:
    with pytest.raises(ValidationError):
        ColorizeParams(palette=["#12345g"])
    grey = to_grey(photo("coffee"))
    with pytest.raises(EngineError, match="no colour"):
        ENGINE.run(EngineInputs(grey, {"reference": grey}), ColorizeParams())


def test_alpha_is_kept() -> None:
    grey = to_grey(photo("coffee"))
    alpha = np.full(grey.shape[:2], 77, np.uint8)
    out = ENGINE.run(EngineInputs(np.dstack([grey, alpha])), ColorizeParams()).images[0].pixels
    assert out.shape[2] == 4 and np.array_equal(out[..., 3], alpha)
