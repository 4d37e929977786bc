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
    rgb: ImageArray,
    weight: npt.NDArray[np.bool_],
    sigma: float,
    ys: npt.NDArray[np.intp],
    xs: npt.NDArray[np.intp],
) -> npt.NDArray[np.float32]:
    """Weighted local mean colour of ``rgb`` where ``weight`` is set, at the pixels ``(ys, xs)``
    only, as ``(N, 3)``. For wide windows it is computed at reduced resolution: the estimate is
    smooth anyway, and this made the whole step 4× cheaper at 1 MP (222 → 57 ms CPU) with the
    same edge error. It is then sampled bilinearly at the wanted pixels (the soft edge, ~4 % of
    a photo) instead of being interpolated back over the whole image: 1 MP ~45-65 → ~20-40 ms
    for the whole unmixing, the same colours (at most 1 level apart, on a handful of pixels)."""
    h, w = weight.shape
    f = max(1, int(sigma // 3))
    flags = weight.view(np.uint8)
    masked = np.asarray(cv2.multiply(rgb, cv2.merge([flags] * 3), dtype=cv2.CV_32F), np.float32)
    wf = flags.astype(np.float32)
    if f == 1:
        full, _ = normalised_blur(masked, wf, sigma)
        return np.asarray(full[ys, xs], dtype=np.float32)
    small = (max(1, w // f), max(1, h // f))
    wc = np.asarray(cv2.resize(masked, small, interpolation=cv2.INTER_AREA), np.float32)
    ws = np.asarray(cv2.resize(wf, small, interpolation=cv2.INTER_AREA), np.float32)
    mean = np.asarray(wc / np.maximum(ws, 1e-6)[..., None], np.float32)
    est, _ = normalised_blur(mean, ws, sigma / f)
    # cv2.resize's bilinear mapping (pixel centres, edges replicated) at the wanted pixels;
    # remap's maps must stay under 32767 rows, so the points are laid out _ROW to a row.
    n = ys.size
    rows = -(-n // _ROW)
    map_x = np.zeros(rows * _ROW, np.float32)
    map_y = np.zeros(rows * _ROW, np.float32)
    map_x[:n] = (xs.astype(np.float32) + 0.5) * np.float32(small[0] / w) - 0.5
    map_y[:n] = (ys.astype(np.float32) + 0.5) * np.float32(small[1] / h) - 0.5
    sampled = cv2.remap(
        est,
        map_x.reshape(rows, _ROW),
        map_y.reshape(rows, _ROW),
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    )
    return np.asarray(sampled, dtype=np.float32).reshape(-1, 3)[:n]


_ROW = 1024


def estimate_foreground(
    image: ImageArray, alpha: npt.NDArray[np.float32], sigma: float
) -> ImageArray:
    """Colours for an RGBA cut-out of ``image`` with matte ``alpha`` (0..1): unchanged where
    the matte is opaque or transparent, the background unmixed from the soft edge between.
    ``sigma`` (pixels) is how far to look for pure colours: about the width of the edge."""
    rgb = np.ascontiguousarray(image[..., :3])
    soft = (alpha > 0.02) & (alpha < 0.98)
    ys, xs = np.nonzero(soft)
    if ys.size == 0:
        return rgb
    fg = _smooth_estimate(rgb, alpha >= 0.98, sigma, ys, xs)
    bg = _smooth_estimate(rgb, alpha <= 0.02, sigma, ys, xs)
    colours = rgb[ys, xs].astype(np.float32)
    a = alpha[ys, xs][:, None]
    solved = np.clip((colours - (1.0 - a) * bg) / np.maximum(a, 0.05), 0.0, 255.0)
    # Below alpha ~0.1 the solution is mostly noise; above ~0.6 it is reliable.
    trust = np.clip((a - 0.1) / 0.5, 0.0, 1.0)
    out = rgb.copy()
    out[ys, xs] = (trust * solved + (1.0 - trust) * fg + 0.5).astype(np.uint8)
    return out
