"""Tests for the text-removal engine: text rendered onto real photos must be gone afterwards
(OCR reads nothing) and the text region must be closer to the clean photo."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from skimage import data

from pixelmill.engines.base import EngineError, EngineInputs, EngineResult
from pixelmill.engines.runtime.ocr import read_text
from pixelmill.engines.text_removal.engine import TextRemovalEngine, TextRemovalParams

Image = npt.NDArray[np.uint8]


def photo(name: str) -> Image:
    """A bundled scikit-image sample photo (offline) as a typed uint8 array."""
    return np.ascontiguousarray(getattr(data, name)(), dtype=np.uint8)


def psnr(a: npt.NDArray[np.uint8], b: npt.NDArray[np.uint8]) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return float(10 * np.log10(255.0**2 / mse))


def with_text(clean: Image, colour: tuple[int, int, int], outline: bool = False) -> Image:
    """``clean`` with two lines of text drawn on it."""
    img = clean.copy()
    h, w = img.shape[:2]
    font = cv2.FONT_HERSHEY_SIMPLEX
    for text, org, size, thick in (
        ("SAMPLE TEXT", (int(w * 0.06), int(h * 0.3)), 1.3, 3),
        ("pixelmill.io 2026", (int(w * 0.1), int(h * 0.75)), 0.9, 2),
    ):
        if outline:
            cv2.putText(img, text, org, font, size, (0, 0, 0), thick + 4, cv2.LINE_AA)
        cv2.putText(img, text, org, font, size, colour, thick, cv2.LINE_AA)
    return img


def remove(image: Image, **params: object) -> EngineResult:
    return TextRemovalEngine().run(EngineInputs(image), TextRemovalParams.model_validate(params))


def characters(image: Image) -> int:
    return sum(len(line.text.replace(" ", "")) for line in read_text(image))


CASES = [
    ("astronaut", (255, 255, 255), False),
    ("coffee", (15, 15, 15), False),
    ("chelsea", (255, 255, 255), True),
]


@pytest.mark.parametrize(("name", "colour", "outline"), CASES)
def test_rendered_text_is_removed(name: str, colour: tuple[int, int, int], outline: bool) -> None:
    clean = photo(name)
    dirty = with_text(clean, colour, outline)
    region = cv2.dilate(np.any(dirty != clean, axis=2).astype(np.uint8), np.ones((7, 7))) > 0

    result = remove(dirty)
    # The engine's own OCR read the rendered text (so the test is meaningful) ...
    assert sum(len(t.replace(" ", "")) for t in result.details["texts"]) >= 20
    out = result.images[0].pixels
    assert out.shape == dirty.shape and out.dtype == np.uint8
    # ... and reads (almost) nothing afterwards.
    assert characters(out) <= 2
    assert psnr(out[region], clean[region]) >= psnr(dirty[region], clean[region]) + 5.0
    details = result.details
    # Outside the reported text boxes nothing changed.
    inside = np.zeros(clean.shape[:2], bool)
    for x, y, w, h in details["boxes"]:
        inside[max(0, y - 3) : y + h + 3, max(0, x - 3) : x + w + 3] = True  # + the 2 px dilation
    assert np.array_equal(out[~inside], dirty[~inside])
    assert inside.mean() < 0.25
    assert details["text_regions"] >= 2
    assert 0.0 < details["mask_coverage"] < 0.15
    assert "Telea" in details["method"]


def test_no_text_returns_the_image_unchanged() -> None:
    clean = photo("astronaut")
    result = remove(clean)
    assert np.array_equal(result.images[0].pixels, clean)
    assert result.details["text_regions"] == 0
    assert result.details["mask_coverage"] == 0.0
    assert "no text found" in result.details["method"]


def test_unreadable_detections_are_kept_unless_asked() -> None:
    # The detector fires on the cat's fur; without recognition those regions would be inpainted.
    cat = photo("chelsea")
    assert remove(cat).details["text_regions"] == 0
    forced = remove(cat, include_unreadable=True)
    assert forced.details["text_regions"] >= 1
    assert not np.array_equal(forced.images[0].pixels, cat)


def test_rgba_alpha_is_kept_and_box_mask_covers_more() -> None:
    clean = np.ascontiguousarray(photo("coffee")[:, :480])
    dirty = with_text(clean, (255, 255, 255))
    alpha = np.full(dirty.shape[:2], 255, np.uint8)
    alpha[:20] = 0
    rgba = np.dstack([dirty, alpha])
    strokes = remove(rgba)
    boxes = remove(rgba, mask="boxes")
    assert strokes.images[0].pixels.shape == rgba.shape
    assert np.array_equal(strokes.images[0].pixels[..., 3], alpha)
    assert boxes.details["mask_coverage"] > strokes.details["mask_coverage"]
    assert boxes.details["text_regions"] == strokes.details["text_regions"] >= 2


def test_rejects_non_rgb_arrays() -> None:
    with pytest.raises(EngineError):
        remove(np.zeros((32, 32), np.uint8))
