"""Estimating how blurred a photo is: the Gaussian σ (in pixels) of its edges.

Method: re-blur gradient ratio (Zhuo & Sim, "Defocus map estimation from a single image",
2011). A step edge blurred by a Gaussian of σ has a peak gradient proportional to ``1/σ``;
blurring it again by a known ``σ0`` gives ``1/sqrt(σ² + σ0²)``. So at each edge pixel the ratio
``R`` of the two gradients gives ``σ = σ0 / sqrt(R² − 1)``, and the median over the stronger
half of Canny edges is robust to texture and outliers.

Two corrections, measured on the scikit-image photos blurred with known σ (1.5, 2, 3) and noise
(0.5–6 grey levels): (1) noise inflates gradients and drags the estimate down, so noisy images
are pre-smoothed by ``σp`` (0.35 × noise σ, at most 2) and ``σp`` is removed in quadrature;
(2) even sharp photos have edges about 0.6 px wide (optics, demosaicing), which is removed the
same way. After both, estimates on those photos land within ±0.25 px of the true σ at
0.25 MP. Images that were themselves upscaled read higher (their own softness adds to the
blur, and the estimate overshoots: a cat photo upscaled 2.7× and blurred by σ = 2 read 2.77),
which is why the unblur engine deconvolves a Gaussian with 0.9 of the estimate (GAUSS_SAFETY).
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.runtime.measures import noise_sigma

FloatImage = npt.NDArray[np.float32]

INTRINSIC_EDGE_SIGMA = 0.6
"""Width (as a Gaussian σ, px) of edges in sharp photographs, removed from the estimate."""

REBLUR_SIGMA = 1.0
"""σ0 of the second blur in the gradient-ratio method."""

MAX_SIDE = 2048
"""Larger images are measured on a centre crop of this side (blur is a per-pixel property,
so cropping keeps it where resizing would not)."""


def _gradient(y: FloatImage) -> FloatImage:
    gx = cv2.Sobel(y, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(y, cv2.CV_32F, 0, 1, ksize=3)
    return np.asarray(np.hypot(gx, gy), dtype=np.float32)


def estimate_blur_sigma(luma: FloatImage, noise: float | None = None) -> float:
    """Gaussian blur σ in pixels of a luminance image on the 0..255 scale (0 for a sharp image,
    and 0 when there are too few edges to measure). ``noise`` is the luminance noise σ if
    already known (it is estimated otherwise)."""
    h, w = luma.shape
    if max(h, w) > MAX_SIDE:
        ch, cw = min(h, MAX_SIDE), min(w, MAX_SIDE)
        y0, x0 = (h - ch) // 2, (w - cw) // 2
        luma = luma[y0 : y0 + ch, x0 : x0 + cw]
    y = np.ascontiguousarray(luma, dtype=np.float32)
    if noise is None:
        grey = np.clip(y + 0.5, 0, 255).astype(np.uint8)
        noise = noise_sigma(np.dstack([grey] * 3))
    pre = 0.0 if noise < 1.5 else min(2.0, 0.35 * noise)
    if pre > 0:
        y = np.asarray(cv2.GaussianBlur(y, (0, 0), pre), dtype=np.float32)
    g1 = _gradient(y)
    g2 = _gradient(np.asarray(cv2.GaussianBlur(y, (0, 0), REBLUR_SIGMA), dtype=np.float32))
    edges = cv2.Canny(np.clip(y, 0, 255).astype(np.uint8), 50, 120) > 0
    if int(edges.sum()) < 50:
        return 0.0
    strong = edges & (g1 >= np.percentile(g1[edges], 50.0))
    ratio = g1[strong] / np.maximum(g2[strong], 1e-6)
    ratio = ratio[ratio > 1.01]
    if ratio.size < 25:
        return 0.0
    total = float(np.median(REBLUR_SIGMA / np.sqrt(ratio.astype(np.float64) ** 2 - 1.0)))
    return math.sqrt(max(total * total - pre * pre - INTRINSIC_EDGE_SIGMA**2, 0.0))
