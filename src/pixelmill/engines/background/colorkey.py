"""Colour-key matting for images on a plain background (logos, icons, studio product shots).

When the image border is one near-uniform colour, that colour *is* the background, and a colour
key gives a better cut-out than any saliency model: it is exact on flat backgrounds, keeps thin
details, and recovers true partial alpha at anti-aliased edges.

How it works:

1. :func:`border_colour` takes the median colour of a thin border band and measures how uniform
   the band is and how noisy (JPEG noise, slight vignetting) the background is.
2. :func:`colour_key_matte` marks background-coloured pixels (distance to the key below a
   noise-adaptive tolerance). Regions of that colour connected to the border are background.
   Enclosed ones ("holes", e.g. the inside of an "O" or a white label on a white-background
   product) are background only if a caller-supplied saliency test says they are not part of the
   object; without one every hole is cleared, as a plain colour key would.
3. In a narrow band around the background the pixel is modelled as ``C = a·F + (1-a)·K`` with
   ``K`` the key and ``F`` the local foreground colour (estimated from nearby opaque pixels by
   normalised convolution). Projecting ``C - K`` onto ``F - K`` gives ``a``; solving for ``F``
   removes the background colour from the edge pixels (no white fringe on a dark background).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import ImageArray

FloatArray = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]

UNIFORM_DISTANCE = 20.0
"""RGB distance from the key within which a border pixel counts as "background coloured"."""


@dataclass(frozen=True)
class BorderColour:
    """The colour of an image's border band and how well one colour explains it."""

    colour: tuple[float, float, float]
    """Median RGB of the border band."""
    uniformity: float
    """Fraction of border pixels within :data:`UNIFORM_DISTANCE` of ``colour``."""
    noise: float
    """90th percentile distance to ``colour`` among those pixels: the background's own spread."""

    @property
    def hex(self) -> str:
        r, g, b = (round(c) for c in self.colour)
        return f"#{r:02x}{g:02x}{b:02x}"

    def is_uniform(self, min_fraction: float = 0.9) -> bool:
        """Whether the border is plain enough for a colour key. 10 % slack lets the object
        touch or cross the border (a product cut off at the bottom)."""
        return self.uniformity >= min_fraction


@dataclass(frozen=True)
class ColourKeyMatte:
    """The result of :func:`colour_key_matte`."""

    alpha: FloatArray
    """``(H, W)`` float32 alpha, 0 background .. 1 opaque."""
    rgb: ImageArray
    """The colours with the key unmixed from partially transparent edge pixels."""
    holes_found: int
    """Enclosed background-coloured regions considered."""
    holes_cleared: int
    """How many of them were made transparent."""
    tolerance: float
    """The RGB distance below which a pixel counted as background colour."""


def _distance(rgb: ImageArray, key: npt.NDArray[np.float32]) -> FloatArray:
    diff = rgb[..., :3].astype(np.float32) - key
    return np.asarray(np.sqrt(np.einsum("...c,...c->...", diff, diff)), dtype=np.float32)


def _border_band(h: int, w: int) -> int:
    return max(1, min(h, w) // 100)


def border_colour(image: ImageArray) -> BorderColour:
    """Measure the border band of an RGB/RGBA ``image`` (about 1 % of the short side wide)."""
    rgb = image[..., :3]
    h, w = rgb.shape[:2]
    b = _border_band(h, w)
    band = np.concatenate(
        [
            rgb[:b].reshape(-1, 3),
            rgb[-b:].reshape(-1, 3),
            rgb[b:-b, :b].reshape(-1, 3),
            rgb[b:-b, -b:].reshape(-1, 3),
        ]
    ).astype(np.float32)
    key = np.median(band, axis=0).astype(np.float32)
    d = np.sqrt(((band - key) ** 2).sum(axis=1))
    close = d < UNIFORM_DISTANCE
    noise = float(np.percentile(d[close], 90)) if close.any() else float("inf")
    return BorderColour(
        colour=(float(key[0]), float(key[1]), float(key[2])),
        uniformity=float(close.mean()),
        noise=noise,
    )


def _edge_band_width(h: int, w: int) -> int:
    # Anti-aliasing spans ~1 px; resampled or JPEG'd product shots a few more at larger sizes.
    return max(2, round(max(h, w) / 500))


def normalised_blur(
    values: FloatArray, weight: FloatArray, sigma: float
) -> tuple[FloatArray, FloatArray]:
    """Weighted Gaussian average of ``values`` (H, W, C) where ``weight`` (H, W) is 1, plus the
    blurred weight itself (how much support each estimate had)."""
    k = (0, 0)
    wsum = np.asarray(cv2.GaussianBlur(weight, k, sigma), dtype=np.float32)
    vsum = np.asarray(cv2.GaussianBlur(values * weight[..., None], k, sigma), dtype=np.float32)
    est = vsum / np.maximum(wsum, 1e-6)[..., None]
    return est.astype(np.float32), wsum


def colour_key_matte(
    image: ImageArray,
    border: BorderColour,
    hole_is_object: Callable[[list[BoolArray]], list[bool]] | None = None,
) -> ColourKeyMatte:
    """Key out ``border.colour`` from an RGB/RGBA ``image`` with soft, colour-unmixed edges.

    ``hole_is_object`` receives the masks of the enclosed background-coloured regions and says,
    for each, whether it belongs to the object (kept opaque). It is only called when there are
    such regions, so an expensive test (a saliency model) costs nothing on simple images.
    """
    rgb = image[..., :3]
    h, w = rgb.shape[:2]
    key = np.array(border.colour, dtype=np.float32)
    dist = _distance(rgb, key)
    # Noise-adaptive tolerance: above the background's own spread, but far below any real
    # foreground contrast.
    noise = border.noise if np.isfinite(border.noise) else UNIFORM_DISTANCE
    tol = float(np.clip(1.5 * noise + 4.0, 8.0, 40.0))
    keyish = (dist < tol).astype(np.uint8)

    count, labels = cv2.connectedComponents(keyish, connectivity=4)
    edge_labels = np.unique(np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]]))
    is_background = np.zeros(count, dtype=bool)
    is_background[edge_labels] = True
    is_background[0] = False  # label 0 is the non-key pixels

    hole_ids = [i for i in range(1, count) if not is_background[i]]
    # Specks of key colour inside the object (a highlight, a few JPEG pixels) are not holes.
    min_hole = max(16, (h * w) // 20000)
    sizes = np.bincount(labels.ravel(), minlength=count)
    hole_ids = [i for i in hole_ids if sizes[i] >= min_hole]
    cleared = 0
    if hole_ids:
        masks = [labels == i for i in hole_ids]
        keep = hole_is_object(masks) if hole_is_object is not None else [False] * len(masks)
        for i, kept in zip(hole_ids, keep, strict=True):
            if not kept:
                is_background[i] = True
                cleared += 1
    background = is_background[labels]

    r = _edge_band_width(h, w)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    near = cv2.dilate(background.astype(np.uint8), kernel).astype(bool)
    band = near & ~background
    opaque = ~near

    colours = rgb.astype(np.float32)
    fg_est, support = normalised_blur(colours, opaque.astype(np.float32), sigma=float(r + 1))
    alpha = np.where(background, 0.0, 1.0).astype(np.float32)

    # Unmix the band: project C - K onto F - K.
    c_k = colours[band] - key
    f_k = fg_est[band] - key
    denom = np.einsum("ij,ij->i", f_k, f_k)
    projected = np.einsum("ij,ij->i", c_k, f_k) / np.maximum(denom, 1e-6)
    # Where no opaque neighbour gives a usable F (a hairline lying entirely inside the band),
    # take the strongest nearby pixel as fully opaque: alpha = distance / local max distance.
    local_max = np.asarray(cv2.dilate(dist, kernel), dtype=np.float32)
    ratio = dist[band] / np.maximum(local_max[band], tol)
    usable = (support[band] > 0.05) & (denom > tol * tol)
    a_band = np.clip(np.where(usable, projected, ratio), 0.0, 1.0).astype(np.float32)
    alpha[band] = a_band

    out = colours.copy()
    a_safe = np.maximum(a_band, 0.02)[:, None]
    out[band] = np.clip(key + c_k / a_safe, 0.0, 255.0)
    out[background] = 0.0
    return ColourKeyMatte(
        alpha=alpha,
        rgb=(out + 0.5).astype(np.uint8),
        holes_found=len(hole_ids),
        holes_cleared=cleared,
        tolerance=tol,
    )
