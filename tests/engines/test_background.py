"""Tests for background segmentation and the background-removal engines, on synthetic
composites whose true foreground is known and on real photos."""

from __future__ import annotations

from typing import Literal

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from skimage import data

from pixelmill.engines.background.segment import main_object_box, salient_mask

SIZE = 320
Background = Literal["plain", "gradient", "textured"]


def photo(name: str) -> npt.NDArray[np.uint8]:
    """A bundled scikit-image sample photo (offline) as a typed uint8 array."""
    return np.ascontiguousarray(getattr(data, name)(), dtype=np.uint8)


def _bottle_shape(h: int, w: int) -> npt.NDArray[np.uint8]:
    """A product-like silhouette (body + neck), anti-aliased, 0..255."""
    m = np.zeros((h, w), np.uint8)
    cv2.ellipse(
        m, (w // 2, int(h * 0.6)), (int(w * 0.2), int(h * 0.25)), 0, 0, 360, 255, -1, cv2.LINE_AA
    )
    cv2.rectangle(m, (int(w * 0.44), int(h * 0.18)), (int(w * 0.56), int(h * 0.4)), 255, -1)
    return m


def _background(kind: Background, h: int, w: int) -> npt.NDArray[np.float32]:
    if kind == "plain":
        return np.full((h, w, 3), (225, 224, 228), np.float32)
    if kind == "gradient":
        t = np.linspace(0.0, 1.0, h, dtype=np.float32)[:, None, None]
        top, bottom = np.array([240, 220, 190], np.float32), np.array([120, 140, 170], np.float32)
        return np.broadcast_to(top * (1 - t) + bottom * t, (h, w, 3)).astype(np.float32)
    brick = cv2.resize(photo("brick"), (w, h), interpolation=cv2.INTER_AREA).astype(np.float32)
    return brick[..., None] * np.array([1.0, 0.85, 0.7], np.float32)


def composite(kind: Background, h: int = SIZE, w: int = SIZE) -> tuple[np.ndarray, np.ndarray]:
    """A shaded blue bottle over ``kind`` of background; returns (RGB uint8, true mask bool)."""
    shape = _bottle_shape(h, w)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    light = 0.6 + 0.4 * np.clip(
        1 - ((xx - w * 0.42) ** 2 + (yy - h * 0.5) ** 2) / (0.3 * w) ** 2, 0, 1
    )
    obj = np.array([30, 90, 200], np.float32) * light[..., None]
    a = shape.astype(np.float32)[..., None] / 255.0
    rgb = (obj * a + _background(kind, h, w) * (1 - a) + 0.5).astype(np.uint8)
    return rgb, shape > 127


def iou(a: np.ndarray, b: np.ndarray) -> float:
    return float((a & b).sum()) / float((a | b).sum())


@pytest.mark.parametrize("kind", ["plain", "gradient", "textured"])
def test_salient_mask_matches_known_shape(kind: Background) -> None:
    rgb, truth = composite(kind)
    mask = salient_mask(rgb)
    assert mask.shape == truth.shape
    assert mask.dtype == np.float32
    assert float(mask.min()) >= 0.0 and float(mask.max()) <= 1.0
    assert iou(mask > 0.5, truth) >= 0.9


def test_salient_mask_accepts_rgba_and_uses_colour() -> None:
    rgb, truth = composite("plain", 200, 260)
    rgba = np.dstack([rgb, np.zeros(rgb.shape[:2], np.uint8)])  # alpha must not matter here
    mask = salient_mask(rgba)
    assert mask.shape == (200, 260)
    assert iou(mask > 0.5, truth) >= 0.9


def test_salient_mask_rejects_grey_arrays() -> None:
    with pytest.raises(ValueError, match="RGB"):
        salient_mask(np.zeros((20, 20), np.uint8))


def test_main_object_box_fits_the_object() -> None:
    rgb, truth = composite("gradient")
    box = main_object_box(salient_mask(rgb))
    assert box is not None
    ys, xs = np.nonzero(truth)
    x, y, w, h = box
    true_box = (
        int(xs.min()),
        int(ys.min()),
        int(xs.max() - xs.min() + 1),
        int(ys.max() - ys.min() + 1),
    )
    assert abs(x - true_box[0]) <= 4 and abs(y - true_box[1]) <= 4
    assert abs(w - true_box[2]) <= 6 and abs(h - true_box[3]) <= 6


def test_main_object_box_ignores_specks_and_empty_masks() -> None:
    empty = np.zeros((100, 100), np.float32)
    assert main_object_box(empty) is None
    mask = empty.copy()
    mask[10:60, 20:50] = 1.0  # the object
    mask[90, 90] = 1.0  # a speck
    assert main_object_box(mask) == (20, 10, 30, 50)
