"""Blur kernels (point-spread functions): building them, measuring their shape, and turning
them into optical transfer functions for FFT deconvolution.

Kernels are float64 arrays of odd side with unit sum. The same builders make the synthetic
camera shake of the validation set (``bench/bench_deblur.py``,
``tests/engines/deblur/test_deblur.py``): a straight line (linear motion) and a random-walk
trajectory with momentum (curved shake, after Boracchi & Foi, "Modeling the performance of
image restoration from motion blur", 2012), both rasterised with sub-pixel splatting and
centred on their centroid so that the blur does not also shift the picture.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
ComplexArray = npt.NDArray[np.complex128]


def gaussian_kernel(sigma: float) -> FloatArray:
    """A normalised isotropic 2-D Gaussian reaching ±3.5 σ."""
    radius = max(1, math.ceil(3.5 * sigma))
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    g = np.exp(-(x**2) / (2.0 * sigma * sigma))
    g /= g.sum()
    return np.outer(g, g)


def _splat(points: FloatArray, size: int) -> FloatArray:
    """Rasterise trajectory points (N × 2, as (x, y) offsets) bilinearly into a ``size``² kernel
    whose centre pixel is the points' centroid."""
    pts = points - points.mean(axis=0)
    c = size // 2
    k = np.zeros((size, size), np.float64)
    x, y = pts[:, 0] + c, pts[:, 1] + c
    x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
    fx, fy = x - x0, y - y0
    for dx, dy, w in (
        (0, 0, (1 - fx) * (1 - fy)),
        (1, 0, fx * (1 - fy)),
        (0, 1, (1 - fx) * fy),
        (1, 1, fx * fy),
    ):
        xi, yi = x0 + dx, y0 + dy
        ok = (xi >= 0) & (xi < size) & (yi >= 0) & (yi < size)
        np.add.at(k, (yi[ok], xi[ok]), w[ok])
    return np.asarray(k / k.sum(), dtype=np.float64)


def _odd_side(length: float) -> int:
    return 2 * (math.ceil(length / 2.0) + 2) + 1


def line_kernel(length: float, angle_deg: float) -> FloatArray:
    """Uniform linear motion of ``length`` px at ``angle_deg`` (0 = horizontal, counter-clockwise
    with y pointing up, i.e. image rows grow downwards)."""
    n = max(2, math.ceil(length * 8))
    t = np.linspace(-length / 2.0, length / 2.0, n)
    a = math.radians(angle_deg)
    pts = np.stack([t * math.cos(a), -t * math.sin(a)], axis=1)
    return _splat(pts, _odd_side(length))


def random_walk_kernel(
    length: float, rng: np.random.Generator, curvature: float = 0.6
) -> FloatArray:
    """A curved camera-shake trajectory of total path ``length`` px: a velocity that keeps its
    momentum and turns by Gaussian steps (``curvature`` is the turn's σ in radians per
    pixel-normalised step), the exposure spread evenly along the path."""
    steps = 256
    heading = rng.uniform(0, 2 * math.pi)
    turns = rng.normal(0.0, curvature, steps).cumsum() * (4.0 / steps) * 2
    angles = heading + turns
    speed = 1.0 + 0.3 * np.abs(rng.normal(0.0, 1.0, steps)).cumsum() / steps
    d = np.stack([np.cos(angles), np.sin(angles)], axis=1) * speed[:, None]
    path = np.vstack([np.zeros((1, 2)), np.cumsum(d, axis=0)])
    seg = np.hypot(*np.diff(path, axis=0).T)
    path *= length / seg.sum()
    # Dwell time per point inversely proportional to speed: resample by arc length at even time.
    return _splat(path, _odd_side(length))


@dataclass(frozen=True)
class KernelShape:
    """Second-moment description of a kernel."""

    major: float
    """Standard deviation (px) along the principal axis."""
    minor: float
    """Standard deviation (px) across it."""
    angle_deg: float
    """Direction of the principal axis (0 = horizontal, counter-clockwise, y up), 0..180."""

    @property
    def line_length(self) -> float:
        """Length of the uniform line with the same spread (σ = L / √12)."""
        return self.major * math.sqrt(12.0)

    @property
    def elongation(self) -> float:
        return self.major / max(self.minor, 1e-6)


def kernel_shape(k: FloatArray) -> KernelShape:
    """Principal spread and direction of a kernel from its second moments."""
    h, w = k.shape
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    s = float(k.sum())
    cx, cy = float((k * xs).sum() / s), float((k * ys).sum() / s)
    dx, dy = xs - cx, ys - cy
    cxx = float((k * dx * dx).sum() / s)
    cyy = float((k * dy * dy).sum() / s)
    cxy = float((k * dx * dy).sum() / s)
    evals, evecs = np.linalg.eigh(np.array([[cxx, cxy], [cxy, cyy]]))
    major, minor = math.sqrt(max(evals[1], 0.0)), math.sqrt(max(evals[0], 0.0))
    vx, vy = float(evecs[0, 1]), float(evecs[1, 1])
    angle = math.degrees(math.atan2(-vy, vx)) % 180.0
    return KernelShape(major, minor, angle)


def centroid_offset(k: FloatArray) -> tuple[float, float]:
    """(dy, dx) of the kernel's centroid from its centre pixel."""
    h, w = k.shape
    s = float(k.sum())
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    return float((k * ys).sum() / s - h // 2), float((k * xs).sum() / s - w // 2)


def kernel_otf(k: FloatArray, shape: tuple[int, int], recentre: bool = True) -> ComplexArray:
    """The real-FFT transfer function (``rfft2`` layout) of kernel ``k`` for images of ``shape``,
    with the kernel's centre at the origin. With ``recentre`` the kernel's centroid is moved to
    the origin with sub-pixel accuracy (a phase ramp), so deconvolving does not shift the image."""
    h, w = shape
    kh, kw = k.shape
    padded = np.zeros((h, w), np.float64)
    padded[:kh, :kw] = k
    padded = np.roll(padded, (-(kh // 2), -(kw // 2)), axis=(0, 1))
    otf = np.fft.rfft2(padded)
    if recentre:
        dy, dx = centroid_offset(k)
        fy = np.fft.fftfreq(h)[:, None]
        fx = np.fft.rfftfreq(w)[None, :]
        otf = otf * np.exp(2j * np.pi * (fy * dy + fx * dx))
    return np.asarray(otf, dtype=np.complex128)
