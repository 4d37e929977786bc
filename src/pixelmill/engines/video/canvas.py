"""Fitting a still image onto a video canvas: the whole image is shown (contained, never
cropped and never extended with invented content); the rest of the canvas is the same image,
cover-scaled, blurred and dimmed."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from pixelmill.engines.base import ImageArray

ASPECTS: dict[str, tuple[int, int]] = {
    "9:16": (720, 1280),
    "1:1": (960, 960),
    "16:9": (1280, 720),
}
"""Canvas size (width, height) per aspect ratio; even sides for yuv420p."""

FILL_BLUR_FRACTION = 0.04
FILL_DIM = 0.55


@dataclass(frozen=True)
class Fitted:
    """The canvas with the image placed on it, and where (scale, offset) it was placed."""

    canvas: ImageArray
    scale: float
    offset: tuple[int, int]
    size: tuple[int, int]
    """(width, height) of the placed image on the canvas."""

    def to_canvas(self, x: float, y: float) -> tuple[float, float]:
        return self.offset[0] + x * self.scale, self.offset[1] + y * self.scale


def blurred_fill(rgb: ImageArray, width: int, height: int) -> ImageArray:
    """The image cover-scaled to ``width`` × ``height``, blurred and dimmed."""
    h, w = rgb.shape[:2]
    cover = max(width / w, height / h)
    cw, ch = max(width, round(w * cover)), max(height, round(h * cover))
    # blur a small copy (cheap), then scale up: the look of a wide blur at a fraction of the cost
    small_scale = 0.25
    sw, sh = max(8, round(cw * small_scale)), max(8, round(ch * small_scale))
    small = cv2.resize(rgb, (sw, sh), interpolation=cv2.INTER_AREA)
    sigma = max(2.0, FILL_BLUR_FRACTION * max(sw, sh))
    small = cv2.GaussianBlur(small, (0, 0), sigma)
    big = cv2.resize(small, (cw, ch), interpolation=cv2.INTER_LINEAR)
    x0, y0 = (cw - width) // 2, (ch - height) // 2
    crop = big[y0 : y0 + height, x0 : x0 + width].astype(np.float32) * FILL_DIM
    return np.ascontiguousarray(crop.clip(0, 255).astype(np.uint8))


def fit(rgb: ImageArray, width: int, height: int) -> Fitted:
    """Contain ``rgb`` in the canvas over its own blurred fill."""
    h, w = rgb.shape[:2]
    scale = min(width / w, height / h)
    pw, ph = max(1, round(w * scale)), max(1, round(h * scale))
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC
    placed = cv2.resize(rgb, (pw, ph), interpolation=interp)
    canvas = blurred_fill(rgb, width, height)
    ox, oy = (width - pw) // 2, (height - ph) // 2
    canvas[oy : oy + ph, ox : ox + pw] = placed
    return Fitted(np.ascontiguousarray(canvas), scale, (ox, oy), (pw, ph))
