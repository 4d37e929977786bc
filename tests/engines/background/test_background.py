"""Tests for background segmentation and the background-removal engines, on synthetic
composites whose true foreground is known and on real photos."""

from __future__ import annotations

from typing import Literal

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from skimage import data

from pixelmill.engines.background.engine import (
    SALIENT_METHOD,
    BackgroundRemovalEngine,
    BackgroundRemovalParams,
    MakeTransparentEngine,
    MakeTransparentParams,
)
from pixelmill.engines.base import EngineError, EngineInputs
from pixelmill.engines.runtime.segmentation import main_object_box, salient_mask

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


# --- engines ---------------------------------------------------------------------------------


def _corner_alpha(rgba: np.ndarray, k: int = 12) -> float:
    """Mean alpha (0..255) of the four k×k corners."""
    a = rgba[..., 3].astype(np.float32)
    return float(np.mean([a[:k, :k], a[:k, -k:], a[-k:, :k], a[-k:, -k:]]))


@pytest.mark.parametrize("kind", ["gradient", "textured"])
def test_background_removal_gives_rgba_cutout(kind: Background) -> None:
    rgb, truth = composite(kind)
    result = BackgroundRemovalEngine().run(EngineInputs(rgb), BackgroundRemovalParams())
    out = result.images[0]
    assert out.preferred_format == "png"
    rgba = out.pixels
    assert rgba.shape == (*rgb.shape[:2], 4)
    assert rgba.dtype == np.uint8
    assert _corner_alpha(rgba) < 1.0
    assert iou(rgba[..., 3] > 127, truth) >= 0.9
    # Opaque pixels keep their colours.
    inside = cv2.erode(truth.astype(np.uint8), np.ones((7, 7), np.uint8)).astype(bool)
    assert np.array_equal(rgba[inside, :3], rgb[inside])
    assert (rgba[inside, 3] == 255).mean() > 0.99
    details = result.details
    assert details["method"].startswith("u2netp")
    assert abs(details["foreground_coverage"] - truth.mean()) < 0.03
    assert details["object_box"] is not None


def test_background_removal_crops_to_object_and_keeps_input_alpha() -> None:
    rgb, truth = composite("plain")
    rgba_in = np.dstack([rgb, np.full(rgb.shape[:2], 255, np.uint8)])
    rgba_in[:, : SIZE // 2, 3] = 0  # the caller's image is already transparent on the left
    engine = BackgroundRemovalEngine()
    kept = engine.run(EngineInputs(rgba_in), BackgroundRemovalParams()).images[0].pixels
    assert (kept[:, : SIZE // 2, 3] == 0).all()
    assert kept[truth & (np.arange(SIZE) >= SIZE // 2 + 4)[None, :], 3].mean() > 250

    cropped = engine.run(EngineInputs(rgb), BackgroundRemovalParams(crop_to_object=True))
    ys, xs = np.nonzero(truth)
    h, w = cropped.images[0].pixels.shape[:2]
    pad = round(0.02 * SIZE)
    assert abs(w - (np.ptp(xs) + 1 + 2 * pad)) <= 6
    assert abs(h - (np.ptp(ys) + 1 + 2 * pad)) <= 6
    assert cropped.details["cropped"] is True


def _logo(h: int = 240, w: int = 360) -> tuple[np.ndarray, np.ndarray]:
    """Red anti-aliased lettering, a ring and a hairline on white; returns (RGB, true alpha)."""
    cover = np.zeros((h, w), np.uint8)
    cv2.putText(cover, "LOGO", (20, 140), cv2.FONT_HERSHEY_DUPLEX, 2.8, 255, 10, cv2.LINE_AA)
    cv2.circle(cover, (300, 170), 40, 255, 14, cv2.LINE_AA)
    cv2.line(cover, (20, 210), (220, 225), 255, 1, cv2.LINE_AA)
    alpha = cover.astype(np.float32) / 255.0
    red = np.array([200, 30, 40], np.float32)
    rgb = (red * alpha[..., None] + 255.0 * (1 - alpha[..., None]) + 0.5).astype(np.uint8)
    return rgb, alpha


def test_make_transparent_keys_plain_background_exactly() -> None:
    rgb, alpha = _logo()
    result = MakeTransparentEngine().run(EngineInputs(rgb), MakeTransparentParams())
    rgba = result.images[0].pixels
    assert result.details["method"].startswith("colour key")
    assert result.details["key_colour"] == "#ffffff"
    got = rgba[..., 3].astype(np.float32) / 255.0
    assert float(np.abs(got - alpha).mean()) < 0.005
    assert iou(got > 0.5, alpha > 0.5) >= 0.98
    # The insides of the O's and of the ring are background, hence transparent.
    assert got[170, 300] == 0.0
    assert result.details["enclosed_regions_cleared"] >= 3
    # Edge pixels are unmixed from the white: their colour is the logo red, not pink.
    edge = (got > 0.2) & (got < 0.8)
    assert edge.sum() > 100
    assert np.abs(rgba[edge, :3].astype(np.float32) - [200, 30, 40]).mean() < 8.0
    assert abs(result.details["foreground_coverage"] - alpha.mean()) < 0.005


def test_make_transparent_keeps_background_coloured_parts_of_an_object() -> None:
    # A product on near-white with a label of exactly the background colour: the label is
    # enclosed by the product and salient, so it stays opaque.
    rgb = np.full((300, 300, 3), 250, np.uint8)
    cv2.ellipse(rgb, (150, 170), (70, 100), 0, 0, 360, (40, 120, 60), -1, cv2.LINE_AA)
    cv2.rectangle(rgb, (100, 140), (200, 200), (250, 250, 250), -1)
    result = MakeTransparentEngine().run(EngineInputs(rgb), MakeTransparentParams())
    rgba = result.images[0].pixels
    assert result.details["method"].startswith("colour key")
    assert (rgba[145:195, 105:195, 3] == 255).all()
    assert _corner_alpha(rgba) == 0.0


def test_make_transparent_uses_saliency_on_busy_backgrounds() -> None:
    rgb, truth = composite("textured")
    engine = MakeTransparentEngine()
    result = engine.run(EngineInputs(rgb), MakeTransparentParams())
    assert result.details["method"].startswith("u2netp")
    assert result.details["border_uniformity"] < 0.9
    assert iou(result.images[0].pixels[..., 3] > 127, truth) >= 0.9

    logo, _ = _logo()
    forced = engine.run(EngineInputs(logo), MakeTransparentParams(method="salient"))
    assert forced.details["method"] == SALIENT_METHOD


def test_engines_reject_unusable_images() -> None:
    with pytest.raises(EngineError):
        BackgroundRemovalEngine().run(
            EngineInputs(np.zeros((2, 2, 3), np.uint8)), BackgroundRemovalParams()
        )
    with pytest.raises(EngineError):
        MakeTransparentEngine().run(
            EngineInputs(np.zeros((10, 10), np.uint8)), MakeTransparentParams()
        )


def test_cutout_edges_lose_the_old_background_colour() -> None:
    # A flat blue object on light grey: the soft edge of a naive cut-out keeps grey in it, which
    # shows as a light fringe on a dark background. Decontaminated edges must be closer to the
    # truth when re-composited on black.
    shape = _bottle_shape(SIZE, SIZE)
    a_true = shape.astype(np.float32)[..., None] / 255.0
    blue = np.array([30, 90, 200], np.float32)
    rgb = (blue * a_true + 225.0 * (1 - a_true) + 0.5).astype(np.uint8)
    rgba = (
        BackgroundRemovalEngine().run(EngineInputs(rgb), BackgroundRemovalParams()).images[0].pixels
    )
    alpha = rgba[..., 3:].astype(np.float32) / 255.0
    soft = (alpha[..., 0] > 0.05) & (alpha[..., 0] < 0.95)
    assert soft.sum() > 100
    truth_on_black = blue * a_true
    cleaned = np.abs(rgba[..., :3] * alpha - truth_on_black)[soft].mean()
    naive = np.abs(rgb * alpha - truth_on_black)[soft].mean()
    assert cleaned < 0.6 * naive
