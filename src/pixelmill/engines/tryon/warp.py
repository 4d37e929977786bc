"""A thin-plate-spline warp of an RGBA image: control points in the source map to control
points in the destination, everything between follows the smoothest (least bending energy)
interpolation.

The spline is fitted *backwards* (destination -> source), so every destination pixel samples
exactly one source position (no holes, no folds to resolve), and it is evaluated on a coarse
grid (every :data:`GRID` pixels) and bilinearly upsampled: a thin-plate spline is smooth at
that scale, and evaluating it per pixel would cost ``pixels × points`` distance terms.
Sampling is premultiplied (no colour fringes at the garment's edge).
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import ImageArray

Points = npt.NDArray[np.float64]
GRID = 4


def _kernel(r2: Points) -> Points:
    """The 2-D thin-plate radial basis ``r² log r`` (written with ``r²``; 0 at 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 0.5 * r2 * np.log(r2)
    return np.nan_to_num(out, nan=0.0, posinf=0.0, neginf=0.0)


class ThinPlateSpline:
    """``f: R² -> R²`` with ``f(src[i]) ≈ dst[i]``: affine part plus radial terms.
    ``smoothing`` (in squared pixels, relative to the points' spread) relaxes exact
    interpolation, which keeps nearly coincident points from producing wild bends."""

    def __init__(self, src: Points, dst: Points, smoothing: float = 0.0) -> None:
        src = np.asarray(src, np.float64)
        dst = np.asarray(dst, np.float64)
        n = len(src)
        if n < 3:
            raise ValueError("a thin-plate spline needs at least three points")
        self._origin = src.mean(axis=0)
        self._scale = max(1e-6, float(np.abs(src - self._origin).max()))
        p = (src - self._origin) / self._scale
        d2 = ((p[:, None, :] - p[None, :, :]) ** 2).sum(-1)
        k = _kernel(d2) + smoothing * np.eye(n)
        ones = np.hstack([np.ones((n, 1)), p])
        a = np.zeros((n + 3, n + 3))
        a[:n, :n] = k
        a[:n, n:] = ones
        a[n:, :n] = ones.T
        b = np.zeros((n + 3, 2))
        b[:n] = dst
        self._coef = np.linalg.lstsq(a, b, rcond=None)[0]
        self._points = p

    def __call__(self, xy: Points) -> Points:
        q = (np.asarray(xy, np.float64) - self._origin) / self._scale
        d2 = ((q[:, None, :] - self._points[None, :, :]) ** 2).sum(-1)
        n = len(self._points)
        return np.asarray(
            _kernel(d2) @ self._coef[:n] + self._coef[n] + q @ self._coef[n + 1 :], np.float64
        )


def warp_rgba(
    rgba: ImageArray,
    src: Points,
    dst: Points,
    out_hw: tuple[int, int],
    box: tuple[int, int, int, int],
    smoothing: float = 1e-3,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Warp ``rgba`` so its points ``src`` land on ``dst`` (pixels of an ``out_hw`` image),
    computing only inside ``box`` ``(x0, y0, x1, y1)``. Returns the warped colour (straight,
    not premultiplied, 0..1) and alpha (0..1), both full ``out_hw`` size."""
    h, w = out_hw
    x0, y0 = max(0, box[0]), max(0, box[1])
    x1, y1 = min(w, box[2]), min(h, box[3])
    colour = np.zeros((h, w, 3), np.float32)
    alpha = np.zeros((h, w), np.float32)
    if x1 <= x0 or y1 <= y0:
        return colour, alpha
    back = ThinPlateSpline(dst, src, smoothing)
    gx = np.arange(x0, x1 + GRID, GRID, dtype=np.float64)
    gy = np.arange(y0, y1 + GRID, GRID, dtype=np.float64)
    mx, my = np.meshgrid(gx, gy)
    mapped = back(np.stack([mx.ravel(), my.ravel()], axis=1)).reshape(len(gy), len(gx), 2)
    # Every pixel of the box, bilinearly between the grid's samples (corner-aligned: pixel
    # x0 + i is sample i / GRID).
    bw, bh = x1 - x0, y1 - y0
    fx, fy = np.meshgrid(
        np.arange(bw, dtype=np.float32) / GRID, np.arange(bh, dtype=np.float32) / GRID
    )
    fine = cv2.remap(mapped.astype(np.float32), fx, fy, interpolation=cv2.INTER_LINEAR)
    a = rgba[..., 3].astype(np.float32) / 255.0
    stack = np.dstack([rgba[..., :3].astype(np.float32) / 255.0 * a[..., None], a])
    sampled = cv2.remap(
        stack,
        np.ascontiguousarray(fine[..., 0]),
        np.ascontiguousarray(fine[..., 1]),
        interpolation=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=(0.0, 0.0, 0.0, 0.0),
    )
    wa = np.clip(sampled[..., 3], 0.0, 1.0)
    colour[y0:y1, x0:x1] = np.clip(sampled[..., :3] / np.maximum(wa, 1e-4)[..., None], 0.0, 1.0)
    alpha[y0:y1, x0:x1] = wa
    return colour, alpha
