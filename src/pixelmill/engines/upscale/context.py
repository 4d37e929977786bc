"""Image-wide statistics that condition the context-aware pixelmill-sr networks.

A small network that only sees a few pixels around each output pixel cannot tell a clean
(antialiased) downscale from an aliased one (nearest neighbour, OpenCV without a prefilter) or a
JPEG-compressed one, so it has to sharpen by a compromise amount that is too little for the first
and too much for the others. These nine numbers describe the whole input's spectrum (mean absolute
first and second differences at lags 1, 2 and 4, the 2x2 checkerboard difference that only
aliasing fills, and 8x8 JPEG blockiness); the network maps them to one gain per feature channel.
Nothing is classified and nothing is switched: the same network runs on every input and learns how
much each statistic should change it.

Numpy only, so that ``training/sr/`` computes exactly the same numbers (it loads this file by
path) on its training patches as the engine computes on a whole upload.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

STATS = 9
_EPS = 1e-4
# Larger images are summarised from a grid of 3 x 3 CROP x CROP crops (about GRID_PIXELS in
# all), whose statistics are averaged: means over a few hundred thousand pixels are as stable as
# over millions, and a 12 MP upload costs a few milliseconds instead of a few hundred.
CROP = 256
GRID_PIXELS = 1 << 19
# JPEG blockiness is a maximum over the eight block phases, which a small window overstates; the
# networks learned it on their training patches (74-84 pixels), so larger images measure it on
# windows of about that size, skip nearly flat ones (as training skipped most flat patches) and
# average.
WINDOW = 80
FLAT_STD = 0.008


def _mean_abs(a: npt.NDArray[np.float32]) -> float:
    return float(np.mean(np.abs(a))) if a.size else 0.0


def image_stats(y: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``(STATS,)`` log-statistics of a luma image ``y`` (``(H, W)`` float32 in 0..1 units).

    Images smaller than 9x9 pixels give statistics of what there is (zeros where a lag does not
    fit). Images over ``GRID_PIXELS`` are measured on an evenly spaced grid of crops whose
    origins are multiples of 8 (the JPEG block grid)."""
    y = np.asarray(y, dtype=np.float32)
    h, w = y.shape
    if h * w <= GRID_PIXELS or h < CROP or w < CROP:
        raw = _raw_stats(y)
    else:
        n = int(np.ceil(np.sqrt(GRID_PIXELS / (CROP * CROP))))
        rows = sorted({int(v) // 8 * 8 for v in np.linspace(0, h - CROP, n)})
        cols = sorted({int(v) // 8 * 8 for v in np.linspace(0, w - CROP, n)})
        crops = [_raw_stats(y[r : r + CROP, c : c + CROP]) for r in rows for c in cols]
        raw = np.mean(np.asarray(crops, dtype=np.float64), axis=0)
    return np.log(np.asarray(raw, dtype=np.float64) + _EPS).astype(np.float32)


def _raw_stats(y: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """The nine statistics before the logarithm (the last, blockiness, is a ratio >= 1)."""
    d1h = y[:, 1:] - y[:, :-1]
    d1v = y[1:, :] - y[:-1, :]
    lap = 4.0 * y[1:-1, 1:-1] - y[:-2, 1:-1] - y[2:, 1:-1] - y[1:-1, :-2] - y[1:-1, 2:]
    checker = d1h[1:, :] - d1h[:-1, :]  # y[i,j] - y[i,j+1] - y[i+1,j] + y[i+1,j+1] (sign aside)
    block = _blockiness(y)
    raw = [
        _mean_abs(d1h),
        _mean_abs(d1v),
        _mean_abs(y[:, 2:] - y[:, :-2]),
        _mean_abs(y[2:, :] - y[:-2, :]),
        _mean_abs(y[:, 4:] - y[:, :-4]) + _mean_abs(y[4:, :] - y[:-4, :]),
        _mean_abs(y[1:, 1:] - y[:-1, :-1]),
        _mean_abs(lap),
        _mean_abs(checker),
    ]
    return np.asarray([*raw, block], dtype=np.float64)


def _block_ratio(y: npt.NDArray[np.float32]) -> float:
    """How much more of the horizontal (vertical) steps fall on one column (row) phase modulo 8
    than on the average phase, at the phase where that is largest; 1 without a block grid."""
    d1h = np.abs(y[:, 1:] - y[:, :-1]).mean(axis=0)
    d1v = np.abs(y[1:, :] - y[:-1, :]).mean(axis=1)
    nh, nv = d1h.shape[0] // 8 * 8, d1v.shape[0] // 8 * 8
    ph = d1h[:nh].reshape(-1, 8).mean(axis=0)
    pv = d1v[:nv].reshape(-1, 8).mean(axis=0)
    ratio = max((ph.max() + _EPS) / (ph.mean() + _EPS), (pv.max() + _EPS) / (pv.mean() + _EPS))
    return float(ratio)


def _blockiness(y: npt.NDArray[np.float32]) -> float:
    """JPEG blockiness, minus ``_EPS`` so that the logarithm sees the ratio itself: of the whole
    image below two windows a side (a training patch), else the mean over its non-flat windows."""
    h, w = y.shape
    if h < 17 or w < 17:
        return 1.0 - _EPS  # no block grid to measure: log(1) == 0
    if h < 2 * WINDOW or w < 2 * WINDOW:
        return _block_ratio(y) - _EPS
    windows = [
        y[i : i + WINDOW, j : j + WINDOW]
        for i in range(0, h - WINDOW + 1, WINDOW)
        for j in range(0, w - WINDOW + 1, WINDOW)
    ]
    textured = [c for c in windows if float(c.std()) >= FLAT_STD] or windows
    return float(np.mean([_block_ratio(c) for c in textured])) - _EPS
