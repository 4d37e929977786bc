"""No-reference image measurements shared by the analyzer, the enhancer and unblur.

Each function takes an RGB uint8 image (or its luminance) and returns a plain number with a
documented scale, so that callers can turn it into words (analysis) or a score (enhancement).
They are deliberately cheap (all together about 30 ms per megapixel): resolution-dependent
measures run on a copy resized to :data:`ANALYSIS_SIDE`, noise on a native-resolution crop.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import cv2
import numpy as np
import numpy.typing as npt
from skimage.restoration import estimate_sigma

from pixelmill.engines.base import ImageArray

FloatImage = npt.NDArray[np.float32]

ANALYSIS_SIDE = 512
"""Longest side of the copy that scale-dependent measures (gradients, structure) use, so that
the same photo scores the same at 0.5 MP and at 12 MP."""

NOISE_CROP = 1024
"""Noise is a per-pixel property that downscaling averages away, so it is measured on a centre
crop of at most this side at native resolution instead."""


def rgb_of(image: ImageArray) -> ImageArray:
    """The RGB part of an RGB(A) uint8 image (a view); raises ``ValueError`` on anything else."""
    if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
        raise ValueError(f"expected a uint8 RGB or RGBA image, got {image.dtype} {image.shape}")
    return image[..., :3]


def luminance(rgb: ImageArray) -> FloatImage:
    """BT.601 luma in 0..1 as float32."""
    y = cv2.cvtColor(np.ascontiguousarray(rgb_of(rgb)), cv2.COLOR_RGB2GRAY)
    return np.asarray(y, dtype=np.float32) / 255.0


_Array = TypeVar("_Array", bound=npt.NDArray[Any])

_estimate_sigma: Callable[..., float] = estimate_sigma


def resize_longest(image: _Array, side: int) -> _Array:
    """Downscale (never upscale) so the longest side is at most ``side``; same dtype."""
    h, w = image.shape[:2]
    f = side / max(h, w)
    if f >= 1.0:
        return image
    size = (max(1, round(w * f)), max(1, round(h * f)))
    return cast(_Array, np.asarray(cv2.resize(image, size, interpolation=cv2.INTER_AREA)))


def colourfulness(rgb: ImageArray) -> float:
    """Hasler & Süsstrunk (2003) colourfulness M on 0..255 RGB: 0 for grey, about 15 "slightly
    colourful", 33 "moderately", 45 "averagely", 59 "quite", 82 "highly", 109+ "extremely"."""
    x = rgb_of(rgb).astype(np.float32)
    rg = x[..., 0] - x[..., 1]
    yb = 0.5 * (x[..., 0] + x[..., 1]) - x[..., 2]
    std = float(np.hypot(rg.std(), yb.std()))
    mean = float(np.hypot(rg.mean(), yb.mean()))
    return std + 0.3 * mean


def mean_chroma(rgb: ImageArray) -> float:
    """Mean CIELAB chroma ``sqrt(a*² + b*²)`` (0 for grey; 20–40 for ordinary photos)."""
    lab = cv2.cvtColor(np.ascontiguousarray(rgb_of(rgb)), cv2.COLOR_RGB2LAB).astype(np.float32)
    return float(np.mean(np.hypot(lab[..., 1] - 128.0, lab[..., 2] - 128.0)))


LUMA_NOISE_RATIO = float(np.sqrt(0.299**2 + 0.587**2 + 0.114**2))
"""Independent noise of σ per RGB channel shows as about 0.668 σ in BT.601 luma (the luma
weights average it down), so per-channel σ ≈ :func:`noise_sigma` / this."""


def noise_sigma(rgb: ImageArray) -> float:
    """Estimated standard deviation of white noise in the *luminance*, on the 0..255 scale
    (Donoho's wavelet MAD via ``skimage.restoration.estimate_sigma``). Clean photos read
    0.3–1.5, visibly grainy ones 4+, and JPEG-smoothed images read low. Images under 16 px on
    a side read 0."""
    h, w = rgb.shape[:2]
    if min(h, w) < 16:
        # The wavelet estimate needs a few detail coefficients per axis; a thumbnail this small
        # has none worth measuring.
        return 0.0
    ch, cw = min(h, NOISE_CROP), min(w, NOISE_CROP)
    y0, x0 = (h - ch) // 2, (w - cw) // 2
    crop = luminance(np.ascontiguousarray(rgb_of(rgb)[y0 : y0 + ch, x0 : x0 + cw]))
    if float(crop.std()) == 0.0:
        return 0.0  # perfectly flat: skimage would take the median of no coefficients
    sigma = float(_estimate_sigma(crop)) * 255.0
    return sigma if math.isfinite(sigma) else 0.0


def gradient_sharpness(y: FloatImage) -> float:
    """Mean Sobel gradient magnitude over the strongest 10 % of pixels of a luminance image,
    at :data:`ANALYSIS_SIDE` (0..1 luma per pixel). It measures how crisp the image's edges are
    independently of how many edges there are: about 0.15–0.35 for sharp photos (soft subjects
    like fur at the low end), roughly half that after a Gaussian blur of σ = 2 px."""
    small = np.asarray(resize_longest(y, ANALYSIS_SIDE), dtype=np.float32)
    gx = cv2.Sobel(small, cv2.CV_32F, 1, 0, ksize=3) / 4.0
    gy = cv2.Sobel(small, cv2.CV_32F, 0, 1, ksize=3) / 4.0
    mag = np.hypot(gx, gy).ravel()
    if mag.size == 0:
        return 0.0
    k = max(1, mag.size // 10)
    top = np.partition(mag, mag.size - k)[-k:]
    return float(top.mean())


@dataclass(frozen=True)
class Exposure:
    """Luminance statistics (0..1): mean, spread and how much is crushed or blown."""

    mean: float
    std: float
    p01: float
    p99: float
    shadows_clipped: float
    highlights_clipped: float

    @property
    def dynamic_range(self) -> float:
        """Spread between the 1st and 99th percentile of luminance."""
        return self.p99 - self.p01


def exposure_stats(y: FloatImage) -> Exposure:
    """Luminance mean, standard deviation, 1st/99th percentiles and the fraction of pixels
    at the ends of the range (≤ 2/255 or ≥ 253/255)."""
    flat = y.ravel()
    p01, p99 = np.percentile(flat, [1.0, 99.0])
    return Exposure(
        mean=float(flat.mean()),
        std=float(flat.std()),
        p01=float(p01),
        p99=float(p99),
        shadows_clipped=float(np.mean(flat <= 2.0 / 255.0)),
        highlights_clipped=float(np.mean(flat >= 253.0 / 255.0)),
    )


def structural_similarity(a: FloatImage, b: FloatImage) -> float:
    """The structure term of SSIM (local correlation of zero-mean patches, Gaussian window
    σ = 1.5) between two luminance images, averaged over the image, at 256 px.

    It ignores changes of brightness and contrast but drops when detail is destroyed or
    invented (halos, posterisation, ringing, smearing). Comparing at 256 px keeps grain, which
    denoising rightly removes, from counting as lost structure."""
    sa = np.asarray(resize_longest(a, 256), dtype=np.float32)
    sb = np.asarray(resize_longest(b, 256), dtype=np.float32)
    mu_a = cv2.GaussianBlur(sa, (0, 0), 1.5)
    mu_b = cv2.GaussianBlur(sb, (0, 0), 1.5)
    var_a = np.maximum(cv2.GaussianBlur(sa * sa, (0, 0), 1.5) - mu_a * mu_a, 0.0)
    var_b = np.maximum(cv2.GaussianBlur(sb * sb, (0, 0), 1.5) - mu_b * mu_b, 0.0)
    cov = cv2.GaussianBlur(sa * sb, (0, 0), 1.5) - mu_a * mu_b
    c3 = (0.03**2) / 2.0
    s = (cov + c3) / (np.sqrt(var_a * var_b) + c3)
    return float(np.mean(s))
