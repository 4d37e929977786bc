"""Style transfer: the eight looks differ from the input and from each other, measurably."""

from __future__ import annotations

import itertools
from typing import get_args

import numpy as np
import pytest
from pydantic import ValidationError
from skimage import data

from pixelmill.engines.base import EngineInputs, ImageArray
from pixelmill.engines.style import StyleParams, StyleTransferEngine
from pixelmill.engines.style.engine import StyleName

ENGINE = StyleTransferEngine()
STYLE_NAMES: tuple[str, ...] = get_args(StyleName)


def photo(name: str) -> ImageArray:
    """A scikit-image sample photo (bundled with the package, no network) as RGB uint8."""
    img = np.asarray(getattr(data, name)(), dtype=np.uint8)
    return np.ascontiguousarray(np.dstack([img] * 3)) if img.ndim == 2 else img


def mad(a: ImageArray, b: ImageArray) -> float:
    """Mean absolute difference in grey levels."""
    return float(np.abs(a.astype(np.float32) - b.astype(np.float32)).mean())


@pytest.fixture(scope="module")
def styled() -> dict[str, ImageArray]:
    img = photo("astronaut")[::2, ::2].copy()  # 256 px keeps the eight renders fast
    return {
        s: ENGINE.run(EngineInputs(img), StyleParams(style=s)).images[0].pixels for s in STYLE_NAMES
    }


def test_all_eight_styles_exist() -> None:
    assert set(STYLE_NAMES) == {
        "cinematic", "anime", "oil_painting", "watercolor",
        "sketch", "pop_art", "cyberpunk", "vintage",
    }  # fmt: skip


def test_every_style_changes_the_input(styled: dict[str, ImageArray]) -> None:
    img = photo("astronaut")[::2, ::2]
    for name, out in styled.items():
        assert out.shape == img.shape and out.dtype == np.uint8
        assert mad(out, img) > 10.0, name


def test_styles_are_distinct_from_each_other(styled: dict[str, ImageArray]) -> None:
    for a, b in itertools.combinations(STYLE_NAMES, 2):
        assert mad(styled[a], styled[b]) > 15.0, (a, b)


def test_sketch_is_grey_and_pop_art_is_posterised(styled: dict[str, ImageArray]) -> None:
    sk = styled["sketch"].astype(np.int16)
    assert np.abs(sk[..., 0] - sk[..., 1]).max() == 0
    # Posterised to 3 levels per channel (some darkened by halftone dots or inked black).
    pop = styled["pop_art"]
    levels = {int(v) for v in np.unique(pop[..., 0])}
    assert len(levels) <= 6


def test_strength_blends_with_the_original() -> None:
    img = photo("coffee")[::2, ::2].copy()
    full = ENGINE.run(EngineInputs(img), StyleParams(style="vintage", strength=1.0))
    half = ENGINE.run(EngineInputs(img), StyleParams(style="vintage", strength=0.5))
    none = ENGINE.run(EngineInputs(img), StyleParams(style="vintage", strength=0.0))
    assert np.array_equal(none.images[0].pixels, img)
    d_full = mad(full.images[0].pixels, img)
    assert abs(mad(half.images[0].pixels, img) - d_full / 2) < 1.5
    assert "strength 0.50" in half.details["method"]


def test_unknown_style_and_bad_strength_are_rejected() -> None:
    with pytest.raises(ValidationError):
        StyleParams(style="impressionism")
    with pytest.raises(ValidationError):
        StyleParams(style="anime", strength=1.5)


def test_alpha_is_kept() -> None:
    img = photo("coffee")[::2, ::2].copy()
    alpha = np.full(img.shape[:2], 9, np.uint8)
    out = ENGINE.run(EngineInputs(np.dstack([img, alpha])), StyleParams(style="anime"))
    assert np.array_equal(out.images[0].pixels[..., 3], alpha)
