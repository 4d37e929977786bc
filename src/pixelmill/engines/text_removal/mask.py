"""Masks of the text pixels inside detected text boxes.

Filling whole boxes removes everything but also inpaints a lot of background that was fine, so
the default is a *stroke* mask: within each box, lightness is compared with a local median (a
window wider than a stroke, so the median is the background), and pixels that stand out are
text. The polarity is chosen per box: bright strokes (white text), dark strokes, or both when
neither clearly dominates (outlined text, semi-transparent watermarks). The mask is then dilated
to cover anti-aliasing and compression halos.

On skimage's astronaut, coffee and chelsea with rendered text in four styles (white, black,
white with black outline, 55 % white watermark), Telea inpainting raised PSNR in the text region
from 7–16 dB to 15.7–23.2 dB (mean 20.5) with this mask, against 12.4–20.6 (mean 18.3) with
filled boxes; always-bright or always-both variants did worse (mean 18.7 and 18.6), and so did
growing the boxes by 8–25 % before masking (mean 19.7–18.2: more texture is caught).
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.ocr import Quad

Mask8 = npt.NDArray[np.uint8]
"""An ``(H, W)`` uint8 mask: 255 where pixels are to be inpainted."""

STROKE_THRESHOLD = 12
"""Lightness (Lab L, 0..255) difference from the local median that marks a stroke pixel."""
POLARITY_RATIO = 2.0
"""One polarity is chosen only when its total excess contrast is this many times the other's."""


def polygon(box: Quad) -> npt.NDArray[np.int32]:
    """A box's corners as an integer ``(4, 2)`` array for OpenCV drawing functions."""
    return np.round(np.asarray(box, dtype=np.float64)).astype(np.int32)


def box_mask(shape: tuple[int, ...], boxes: Sequence[Quad]) -> Mask8:
    """The text boxes filled (255 inside)."""
    mask = np.zeros(shape[:2], np.uint8)
    for box in boxes:
        cv2.fillPoly(mask, [polygon(box)], 255)
    return mask


def _box_strokes(lightness: npt.NDArray[np.int16], poly: npt.NDArray[np.int32]) -> Mask8:
    """Stroke pixels of one box, in the coordinates of ``lightness`` (a crop around it)."""
    _, _, w, h = cv2.boundingRect(poly)
    # The median window must be wider than a stroke (about a sixth of the text height) and
    # narrower than the surroundings that define the background.
    k = int(max(5, min(61, 0.9 * max(4, min(w, h))))) | 1
    median = cv2.medianBlur(np.clip(lightness, 0, 255).astype(np.uint8), k).astype(np.int16)
    d = lightness - median
    inside = np.zeros(lightness.shape, np.uint8)
    cv2.fillPoly(inside, [poly], 1)
    bright, dark = d > STROKE_THRESHOLD, d < -STROKE_THRESHOLD
    inner = inside.astype(bool)
    bright_excess = float(np.clip(d[inner] - STROKE_THRESHOLD, 0, None).sum())
    dark_excess = float(np.clip(-d[inner] - STROKE_THRESHOLD, 0, None).sum())
    if bright_excess > POLARITY_RATIO * dark_excess:
        strokes = bright
    elif dark_excess > POLARITY_RATIO * bright_excess:
        strokes = dark
    else:
        strokes = bright | dark
    return np.asarray((strokes & inner).astype(np.uint8) * 255, dtype=np.uint8)


def stroke_mask(image: ImageArray, boxes: Sequence[Quad], dilate: int = 2) -> Mask8:
    """Mask of the text strokes inside ``boxes`` of an RGB/RGBA ``image``, dilated by
    ``dilate`` pixels."""
    rgb = np.ascontiguousarray(image[..., :3])
    lightness = cv2.cvtColor(rgb, cv2.COLOR_RGB2LAB)[..., 0].astype(np.int16)
    h, w = lightness.shape
    mask = np.zeros((h, w), np.uint8)
    for box in boxes:
        poly = polygon(box)
        x, y, bw, bh = cv2.boundingRect(poly)
        # Context around the box so the median near its edges still sees background.
        pad = max(8, min(bw, bh))
        x0, y0 = max(0, x - pad), max(0, y - pad)
        x1, y1 = min(w, x + bw + pad), min(h, y + bh + pad)
        if x1 <= x0 or y1 <= y0:
            continue
        strokes = _box_strokes(lightness[y0:y1, x0:x1], poly - np.array([x0, y0], np.int32))
        np.maximum(mask[y0:y1, x0:x1], strokes, out=mask[y0:y1, x0:x1])
    if dilate > 0:
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * dilate + 1, 2 * dilate + 1))
        mask = np.asarray(cv2.dilate(mask, kernel), dtype=np.uint8)
    return mask
