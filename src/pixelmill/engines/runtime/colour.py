"""Colour plumbing shared by the photo engines (enhance, unblur, style, colorize, analyze):
the alpha channel set aside and re-attached, CIELAB conversions, and the ``L*`` unsharp mask.

Every function takes and returns ``uint8`` RGB (or CIELAB float32) arrays and is pure.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import ImageArray

FloatImage = npt.NDArray[np.float32]


def split_alpha(image: ImageArray) -> tuple[ImageArray, ImageArray | None]:
    """``(rgb, alpha)`` of an RGB(A) uint8 image; alpha is ``None`` for RGB input. Engines work
    on the colour and hand the untouched alpha back with :func:`merge_alpha`."""
    if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
        raise ValueError(f"expected a uint8 RGB or RGBA image, got {image.dtype} {image.shape}")
    rgb = np.ascontiguousarray(image[..., :3])
    alpha = np.ascontiguousarray(image[..., 3]) if image.shape[2] == 4 else None
    return rgb, alpha


def merge_alpha(rgb: ImageArray, alpha: ImageArray | None) -> ImageArray:
    """Re-attach an alpha channel taken off by :func:`split_alpha` (no-op when ``None``)."""
    if alpha is None:
        return rgb
    return np.ascontiguousarray(np.dstack([rgb, alpha]))


def to_lab(rgb: ImageArray) -> FloatImage:
    """CIELAB as float32 with ``L*`` in 0..100 and ``a*``, ``b*`` centred on 0."""
    lab = cv2.cvtColor(rgb.astype(np.float32) / 255.0, cv2.COLOR_RGB2LAB)
    return np.asarray(lab, dtype=np.float32)


def from_lab(lab: FloatImage) -> ImageArray:
    """Inverse of :func:`to_lab`, clipped and rounded to uint8 RGB."""
    rgb = cv2.cvtColor(lab.astype(np.float32), cv2.COLOR_LAB2RGB)
    return np.asarray(np.clip(rgb * 255.0 + 0.5, 0, 255), dtype=np.uint8)


def unsharp_mask(
    rgb: ImageArray, sigma: float = 1.0, amount: float = 0.6, threshold: float = 1.0
) -> ImageArray:
    """Unsharp mask on ``L*``: ``L + amount * (L - blur(L))`` where the difference exceeds
    ``threshold`` (in ``L*`` units), so flat areas and faint grain are not amplified."""
    lab = to_lab(rgb)
    L = lab[..., 0]
    detail = L - cv2.GaussianBlur(L, (0, 0), sigma)
    if threshold > 0:
        # Soft threshold: fade the boost in over [threshold, 2*threshold] instead of a hard cut,
        # which would leave visible contours.
        weight = np.clip((np.abs(detail) - threshold) / threshold, 0.0, 1.0)
        detail = detail * weight
    lab[..., 0] = np.clip(L + amount * detail, 0.0, 100.0)
    return from_lab(lab)
