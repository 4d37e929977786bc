"""The image statistics that condition pixelmill-sr's context-aware networks
(``pixelmill.engines.upscale.context``)."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image
from skimage import data as skdata

from pixelmill.engines.upscale import context
from pixelmill.engines.upscale.context import STATS, image_stats
from pixelmill.engines.upscale.learned import _luma01

U8 = npt.NDArray[np.uint8]
# Indices into the statistics (context.py's order).
D2_H, CHECKER, BLOCK = 2, 7, 8


def _photo(name: str) -> U8:
    img = np.asarray(getattr(skdata, name)(), dtype=np.uint8)
    return np.repeat(img[..., None], 3, axis=2) if img.ndim == 2 else img


def _downscales(name: str) -> dict[str, U8]:
    hr = _photo(name)
    h, w = hr.shape[0] // 2, hr.shape[1] // 2
    clean = np.asarray(Image.fromarray(hr).resize((w, h), Image.Resampling.BICUBIC))
    nearest = np.asarray(cv2.resize(hr, (w, h), interpolation=cv2.INTER_NEAREST), np.uint8)
    ok, buf = cv2.imencode(".jpg", clean, [cv2.IMWRITE_JPEG_QUALITY, 60])
    assert ok
    jpeg = np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR), np.uint8)
    return {"clean": clean, "nearest": nearest, "jpeg": jpeg}


@pytest.mark.parametrize("name", ["coffee", "camera", "chelsea"])
def test_statistics_separate_aliased_and_compressed_from_clean_downscales(name: str) -> None:
    stats = {k: image_stats(_luma01(v)) for k, v in _downscales(name).items()}
    assert all(s.shape == (STATS,) and s.dtype == np.float32 for s in stats.values())
    assert all(np.isfinite(s).all() for s in stats.values())
    # Nearest neighbour keeps the 2x2 checkerboard energy that antialiasing removes: relative to
    # the lag-2 difference: measured +0.39 to +0.43 (log units) higher on these three photos.
    aliasing = {k: float(s[CHECKER] - s[D2_H]) for k, s in stats.items()}
    assert aliasing["nearest"] >= aliasing["clean"] + 0.25, aliasing
    # JPEG q60 puts steps on the 8x8 block grid: blockiness measured 0.20-0.24 vs 0.03-0.08.
    assert stats["jpeg"][BLOCK] >= stats["clean"][BLOCK] + 0.1, stats


def test_large_images_are_measured_on_a_grid_of_crops_close_to_the_whole() -> None:
    big = cv2.resize(_photo("astronaut"), (1700, 1500), interpolation=cv2.INTER_CUBIC)
    y = _luma01(np.asarray(big, np.uint8))
    assert y.size > context.GRID_PIXELS
    whole = np.log(context._raw_stats(y) + 1e-4)
    grid = image_stats(y)
    # Means over the nine crops (0.59 MP) against all 2.55 MP: within 0.15 in log units.
    assert np.abs(grid[:BLOCK] - whole[:BLOCK]).max() < 0.15, (grid, whole)


def test_tiny_and_flat_images_give_finite_statistics() -> None:
    for y in (np.zeros((1, 1), np.float32), np.full((40, 30), 0.5, np.float32)):
        s = image_stats(y)
        assert s.shape == (STATS,)
        assert np.isfinite(s).all()
