"""Colour from a reference photo or a palette, for a greyscale ``L*`` image.

Everything here works in CIELAB: the target's lightness ``L*`` is kept exactly and only the
chroma channels ``a*b*`` are produced. There is no learned model: colour comes from the
reference or palette the caller supplies, or from the procedural palettes in
:mod:`~pixelmill.engines.colorize.scene`.
"""

from __future__ import annotations

import re

import cv2
import numpy as np
import numpy.typing as npt
from scipy import ndimage

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.colour import to_lab

FloatImage = npt.NDArray[np.float32]

BINS = (48, 16, 16)
"""Feature bins for reference matching: lightness, local standard deviation, context lightness."""

CONTEXT_SIGMA = 8.0
"""σ (px) of the wider-context lightness feature. Welsh et al. match on lightness and 5×5
standard deviation only; adding the lightness of the surroundings separates, say, a light
patch in a dark region from the same lightness in a bright sky, and raised PSNR on the
scikit-image photos by 0.5–1.2 dB."""


def guided_radius(h: int, w: int) -> int:
    """Guided-filter radius for smoothing chroma: about 1/64 of the longest side, at least 4."""
    return max(4, round(max(h, w) / 64))


def smooth_chroma(lightness: FloatImage, ab: FloatImage, eps: float = 1e-3) -> FloatImage:
    """Edge-aware smoothing of ``a*b*`` with the lightness as guide: colour becomes spatially
    coherent inside regions and stops at the image's own edges (He et al. guided filter)."""
    h, w = lightness.shape
    guide = np.ascontiguousarray(lightness / 100.0, dtype=np.float32)
    out = cv2.ximgproc.guidedFilter(
        guide, np.ascontiguousarray(ab, np.float32), guided_radius(h, w), eps
    )
    return np.asarray(out, dtype=np.float32)


def _context(lightness: FloatImage) -> FloatImage:
    return np.asarray(cv2.GaussianBlur(lightness, (0, 0), CONTEXT_SIGMA), dtype=np.float32)


def _local_std(lightness: FloatImage) -> FloatImage:
    mu = cv2.blur(lightness, (5, 5))
    var = cv2.blur(lightness * lightness, (5, 5)) - mu * mu
    return np.asarray(np.sqrt(np.maximum(var, 0.0)), dtype=np.float32)


def _bin_index(
    lightness: FloatImage, std: FloatImage, context: FloatImage
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    i = np.clip((lightness / 100.0 * BINS[0]).astype(np.intp), 0, BINS[0] - 1)
    # sqrt spacing: most pixels have a small local std, so give the low end more bins.
    j = np.clip((np.sqrt(std / 25.0) * BINS[1]).astype(np.intp), 0, BINS[1] - 1)
    k = np.clip((context / 100.0 * BINS[2]).astype(np.intp), 0, BINS[2] - 1)
    return i, j, k


def reference_chroma(lightness: FloatImage, reference: ImageArray) -> FloatImage:
    """``a*b*`` for a target lightness from a colour reference (Welsh et al. 2002 style).

    1. *Luminance remapping*: the reference ``L*`` is shifted and scaled to the target's mean
       and standard deviation, so matching compares like with like.
    2. *Matching on local statistics*: each pixel is described by its lightness, the standard
       deviation of its 5×5 neighbourhood and a wider-context lightness. Instead of searching
       ~200 jittered samples per pixel as Welsh did, every reference pixel is put in a
       48×16×16 feature bin and each bin keeps the mean ``a*b*`` of its pixels; empty bins take
       their nearest filled neighbour. Lookup is then one indexing operation (~30 ms/MP).
    3. The copied chroma is smoothed with a guided filter on the target's lightness.
    """
    ref_lab = to_lab(np.ascontiguousarray(reference[..., :3]))
    ref_l = ref_lab[..., 0]
    scale = float(lightness.std()) / max(float(ref_l.std()), 1e-3)
    ref_l = np.asarray((ref_l - ref_l.mean()) * scale + lightness.mean(), dtype=np.float32)
    ri, rj, rk = _bin_index(ref_l, _local_std(ref_l), _context(ref_l))
    size = int(np.prod(BINS))
    flat = np.ravel_multi_index((ri, rj, rk), BINS).ravel()
    count = np.bincount(flat, minlength=size).astype(np.float64)
    mean_a = np.bincount(flat, weights=ref_lab[..., 1].ravel(), minlength=size)
    mean_b = np.bincount(flat, weights=ref_lab[..., 2].ravel(), minlength=size)
    table_a = (mean_a / np.maximum(count, 1.0)).reshape(BINS)
    table_b = (mean_b / np.maximum(count, 1.0)).reshape(BINS)
    empty = (count == 0).reshape(BINS)
    if empty.any() and not empty.all():
        nearest = ndimage.distance_transform_edt(empty, return_distances=False, return_indices=True)
        table_a = table_a[tuple(nearest)]
        table_b = table_b[tuple(nearest)]
    ti, tj, tk = _bin_index(lightness, _local_std(lightness), _context(lightness))
    ab = np.dstack([table_a[ti, tj, tk], table_b[ti, tj, tk]]).astype(np.float32)
    return smooth_chroma(lightness, ab)


_HEX = re.compile(r"^#?([0-9a-fA-F]{6}|[0-9a-fA-F]{3})$")


def parse_hex(colour: str) -> tuple[int, int, int]:
    """``"#1a2b3c"``, ``"1a2b3c"`` or ``"#abc"`` → ``(r, g, b)``; ``ValueError`` otherwise."""
    m = _HEX.match(colour.strip())
    if not m:
        raise ValueError(f"not a hex colour: {colour!r}")
    digits = m.group(1)
    if len(digits) == 3:
        digits = "".join(c * 2 for c in digits)
    return (int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16))


def palette_lab(colours: list[str]) -> FloatImage:
    """Palette colours as CIELAB rows ``(L*, a*, b*)`` sorted from dark to light."""
    rgb = np.array([[parse_hex(c) for c in colours]], dtype=np.uint8)
    lab = to_lab(rgb)[0]
    return np.asarray(lab[np.argsort(lab[:, 0])], dtype=np.float32)


def gradient_map_chroma(
    lightness: FloatImage, stops_l: FloatImage, stops_ab: FloatImage
) -> FloatImage:
    """``a*b*`` interpolated piecewise-linearly along lightness between control stops
    (``stops_l`` ascending, ``stops_ab`` one ``(a*, b*)`` row per stop)."""
    a = np.interp(lightness, stops_l, stops_ab[:, 0])
    b = np.interp(lightness, stops_l, stops_ab[:, 1])
    return np.dstack([a, b]).astype(np.float32)


def palette_chroma(lightness: FloatImage, colours: list[str]) -> FloatImage:
    """Map lightness bands to palette colours (a gradient map).

    Colours are sorted dark to light and the *k*-th of *n* is pinned at the image's
    ``(k + 0.5) / n`` lightness quantile, so each colour gets an equal share of the image
    whatever its own lightness; chroma is interpolated between them and the image's own
    lightness is kept, so detail and shading survive."""
    lab = palette_lab(colours)
    n = lab.shape[0]
    quantiles = (np.arange(n, dtype=np.float64) + 0.5) / n * 100.0
    stops = np.percentile(lightness, quantiles).astype(np.float32)
    # np.interp needs strictly increasing stops; flat images can repeat a percentile.
    stops = np.maximum.accumulate(stops + np.arange(n, dtype=np.float32) * 1e-3)
    return smooth_chroma(lightness, gradient_map_chroma(lightness, stops, lab[:, 1:]))
