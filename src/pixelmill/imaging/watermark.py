"""The visible "TEST" watermark on every image and every video frame delivered to a test key
(docs/accounts.md). What gets it is decided in one place for jobs,
``jobs/runner.py::mark_test_output`` (images, and each frame of an MP4 re-encoded with
``engines/video/encode.py::redraw_mp4``), and for synchronous results in
``operations/results.py`` (images only: no synchronous call delivers a video to an API key).
``imaging`` cannot import ``engines`` (``engines -> providers -> imaging`` would close a cycle),
so the video step lives with the runner.

A classical overlay, drawn with OpenCV: the word repeated in staggered rows across the whole
image (so no crop of a useful size escapes it), white letters with a dark outline (readable on
light and dark pixels alike), blended at :data:`TEXT_OPACITY` so the work under it stays
visible enough to judge. On an image with alpha (a cut-out), the letters are made opaque
enough to show over transparent pixels too. Deterministic: the same size gets the same mask.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

TEXT = "TEST"
TEXT_OPACITY = 0.6
OUTLINE_OPACITY = 0.5
MIN_ALPHA = 200
"""The alpha the letters get at least on an image with alpha (255: opaque)."""
_FONT = cv2.FONT_HERSHEY_DUPLEX
_TEXT_FRACTION = 0.22
"""Each word spans about this share of the image's width."""


def watermark_masks(height: int, width: int) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """The letters and their outline (disjoint), as boolean masks of an image of this size."""
    text = np.zeros((height, width), np.uint8)
    scale, thickness, (tw, th) = _fit(width)
    step_x, step_y = int(tw * 1.6), int(th * 3.2)
    for row, y in enumerate(range(th + th // 2, height + th, step_y)):
        offset = (row % 2) * (step_x // 2) - step_x // 3
        for x in range(offset, width, step_x):
            cv2.putText(text, TEXT, (x, y), _FONT, scale, 255, thickness, cv2.LINE_AA)
    letters = text > 96
    ring = max(1, thickness // 2 + 1)
    grown = cv2.dilate(letters.astype(np.uint8), np.ones((2 * ring + 1, 2 * ring + 1), np.uint8))
    return letters, grown.astype(bool) & ~letters


def add_test_watermark(pixels: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """A copy of an RGB or RGBA ``uint8`` image with the watermark drawn over it."""
    height, width = pixels.shape[:2]
    letters, outline = watermark_masks(height, width)
    out = pixels.copy()
    rgb = out[..., :3].astype(np.float32)
    rgb[outline] = rgb[outline] * (1 - OUTLINE_OPACITY)  # towards black
    rgb[letters] = rgb[letters] * (1 - TEXT_OPACITY) + 255 * TEXT_OPACITY
    out[..., :3] = np.clip(rgb + 0.5, 0, 255).astype(np.uint8)
    if out.shape[2] == 4:
        drawn = letters | outline
        out[..., 3][drawn] = np.maximum(out[..., 3][drawn], MIN_ALPHA)
    return out


def _fit(width: int) -> tuple[float, int, tuple[int, int]]:
    """The font scale and stroke of a word about :data:`_TEXT_FRACTION` of ``width`` wide, and
    the word's size in pixels."""
    (base_w, _), _ = cv2.getTextSize(TEXT, _FONT, 1.0, 1)
    scale = max(0.35, width * _TEXT_FRACTION / base_w)
    thickness = max(1, round(scale * 2))
    (tw, th), _ = cv2.getTextSize(TEXT, _FONT, scale, thickness)
    return scale, thickness, (max(tw, 1), max(th, 1))
