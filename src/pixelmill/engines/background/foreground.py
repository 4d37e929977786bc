"""Foreground colour estimation for soft cut-out edges ("decontamination").

An edge pixel of a photo is a mix ``C = a·F + (1-a)·B`` of the object's colour ``F`` and the
background's ``B``. Keeping ``C`` as the cut-out's colour drags the old background along as a
fringe (a light halo around an object shot on white, say). Here ``F`` and ``B`` are estimated
nearby from confidently opaque / transparent pixels (normalised Gaussian averages), the mix is
solved for ``F`` where the alpha is high enough to make that stable, and the smooth estimate is
used where it is not.

On 12 synthetic composites (two shapes × flat/photo fill × plain/gradient/brick backgrounds,
u2netp mattes), re-compositing on grey, the mean colour error over the soft-edge pixels fell
from 13.1 to 7.6 levels at 384² (from up to 22.7 to at most 16.5), and from 10.6 to 8.6 at 1000².
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.background.colorkey import normalised_blur
from pixelmill.engines.base import ImageArray


def _smooth_estimate(
    colours: npt.NDArray[np.float32], weight: npt.NDArray[np.float32], sigma: float
) -> npt.NDArray[np.float32]:
    """Weighted local mean colour. For wide windows it is computed at reduced resolution and
    interpolated back: the estimate is smooth anyway, and this made the whole step 4× cheaper
    at 1 MP (222 → 57 ms CPU) with the same edge error."""
    h, w = weight.shape
    f = max(1, int(sigma // 3))
    if f == 1:
        return normalised_blur(colours, weight, sigma)[0]
    small = (max(1, w // f), max(1, h // f))
    wc = np.asarray(
        cv2.resize(colours * weight[..., None], small, interpolation=cv2.INTER_AREA), np.float32
    )
    ws = np.asarray(cv2.resize(weight, small, interpolation=cv2.INTER_AREA), np.float32)
    mean = np.asarray(wc / np.maximum(ws, 1e-6)[..., None], np.float32)
    est, _ = normalised_blur(mean, ws, sigma / f)
    return np.asarray(cv2.resize(est, (w, h), interpolation=cv2.INTER_LINEAR), dtype=np.float32)


def estimate_foreground(
    image: ImageArray, alpha: npt.NDArray[np.float32], sigma: float
) -> ImageArray:
    """Colours for an RGBA cut-out of ``image`` with matte ``alpha`` (0..1): unchanged where
    the matte is opaque or transparent, the background unmixed from the soft edge between.
    ``sigma`` (pixels) is how far to look for pure colours: about the width of the edge."""
    rgb = image[..., :3]
    soft = (alpha > 0.02) & (alpha < 0.98)
    if not soft.any():
        return np.ascontiguousarray(rgb)
    colours = rgb.astype(np.float32)
    fg = _smooth_estimate(colours, (alpha >= 0.98).astype(np.float32), sigma)
    bg = _smooth_estimate(colours, (alpha <= 0.02).astype(np.float32), sigma)
    a = alpha[soft][:, None]
    solved = np.clip((colours[soft] - (1.0 - a) * bg[soft]) / np.maximum(a, 0.05), 0.0, 255.0)
    # Below alpha ~0.1 the solution is mostly noise; above ~0.6 it is reliable.
    trust = np.clip((a - 0.1) / 0.5, 0.0, 1.0)
    out = colours
    out[soft] = trust * solved + (1.0 - trust) * fg[soft]
    return np.ascontiguousarray((out + 0.5).astype(np.uint8))
