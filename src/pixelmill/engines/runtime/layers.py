"""Layers and premultiplied compositing, the one home every engine that places a cut-out on a
canvas uses (scenes, silo, replace-background, product photos, try-on, avatars, edit): cut-outs
with decontaminated edges, premultiplied-alpha scaling and placement, the "over" paste, light
colour harmonisation and the final conversions to 8 bits. Shadows and reflections are
:mod:`~pixelmill.engines.runtime.shadows`.

Conventions: float32 sRGB 0..1 throughout. A :class:`Layer` holds the subject as premultiplied
colour (``rgb * alpha``) plus alpha, positioned on the canvas. Premultiplied colour is what makes
resizing and blending correct at soft edges: averaging unpremultiplied colours would mix the
invisible colour of transparent pixels into the edge and leave a fringe.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import EngineError, ImageArray
from pixelmill.engines.runtime.segmentation import mask_to_alpha, salient_mask
from pixelmill.engines.runtime.textures import Gray, Rgb

Box = tuple[int, int, int, int]
"""``(x, y, w, h)`` in canvas pixels."""

_LUMA = np.asarray((0.2126, 0.7152, 0.0722), dtype=np.float32)


@dataclass(frozen=True)
class Layer:
    """A subject positioned on the canvas: ``premult`` is ``(h, w, 3)`` colour × alpha,
    ``alpha`` ``(h, w)``, both float32; ``(x, y)`` is the top-left corner in canvas pixels
    (it may lie partly outside the canvas)."""

    premult: Rgb
    alpha: Gray
    x: int
    y: int


# --- cut-outs --------------------------------------------------------------------------------


def to_float(image: ImageArray) -> Rgb:
    """uint8 RGB(A) -> float32 RGB 0..1 (alpha dropped)."""
    return image[..., :3].astype(np.float32) * np.float32(1.0 / 255.0)


def has_meaningful_alpha(image: ImageArray) -> bool:
    """True for an RGBA image whose alpha actually separates a subject from a background: at
    least 2 % of the pixels are (nearly) transparent and at least 2 % are opaque. A fully
    opaque RGBA upload (common from editors) does not count."""
    if image.ndim != 3 or image.shape[2] != 4:
        return False
    a = image[..., 3]
    n = a.size
    return bool(np.count_nonzero(a < 16) > 0.02 * n and np.count_nonzero(a > 240) > 0.02 * n)


def _local_mean_at(
    values: Rgb, weight: Gray, radius: int, at: tuple[npt.NDArray[np.intp], ...]
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    """Weighted local mean of ``values`` over a (2r+1)² window, evaluated only at the pixels
    ``at``, and whether each window held any weight; a pixel whose window is empty gets the
    mean over a window four times wider (normalised convolution: box filters cost the same at
    any radius, and only the few edge pixels need the division)."""
    n = len(at[0])
    mean = np.zeros((n, 3), dtype=np.float32)
    found = np.zeros(n, dtype=bool)
    wv = values * weight[..., None]
    for r in (radius, 4 * radius):
        k = (2 * r + 1, 2 * r + 1)
        num = cv2.boxFilter(wv, -1, k, normalize=True, borderType=cv2.BORDER_REFLECT)[at]
        den = cv2.boxFilter(weight, -1, k, normalize=True, borderType=cv2.BORDER_REFLECT)[at]
        ok = (den > 1e-3) & ~found
        mean[ok] = num[ok] / den[ok][:, None]
        found |= ok
    return mean, found


def decontamination_radius(h: int, w: int) -> int:
    """The neighbourhood radius :func:`decontaminate` uses for an ``h`` × ``w`` image (it
    looks up to four times this far); strips of a large image must use the full image's."""
    return max(3, round(max(h, w) / 100))


def decontaminate(rgb: Rgb, alpha: Gray, radius: int | None = None) -> Rgb:
    """Estimate the subject's own colour ``F`` at soft edges, removing the old background's
    colour that bled into them (a grey halo from a grey studio wall, green from grass).

    An edge pixel is ``I = a·F + (1 - a)·B``. ``B`` is estimated as the local mean of nearby
    clear-background pixels, and ``F = (I - (1 - a)·B) / a`` where ``a`` is large enough for the
    division to be stable; where ``a`` is small, ``F`` falls back to the local mean of nearby
    solid-subject pixels. Pixels with alpha 0 or 1 are returned unchanged."""
    band = (alpha > 0.01) & (alpha < 0.99)
    if not band.any():
        return rgb
    h, w = alpha.shape
    ys, xs = np.nonzero(band)
    r = decontamination_radius(h, w) if radius is None else radius
    y0, y1 = max(0, int(ys.min()) - 4 * r), min(h, int(ys.max()) + 4 * r + 1)
    x0, x1 = max(0, int(xs.min()) - 4 * r), min(w, int(xs.max()) + 4 * r + 1)
    roi_rgb, roi_a = rgb[y0:y1, x0:x1], alpha[y0:y1, x0:x1]
    at = (ys - y0, xs - x0)
    bg, has_bg = _local_mean_at(roi_rgb, (roi_a < 0.05).astype(np.float32), r, at)
    fg, has_fg = _local_mean_at(roi_rgb, (roi_a > 0.95).astype(np.float32), r, at)
    observed = rgb[ys, xs]
    a = alpha[ys, xs][:, None]
    solved = np.clip((observed - (1.0 - a) * bg) / np.maximum(a, 0.05), 0.0, 1.0)
    # No clear background nearby -> nothing to subtract; no solid subject nearby -> no
    # neighbour colour to borrow. Fall back to the observed colour in either case.
    solved = np.where(has_bg[:, None], solved, observed)
    near = np.where(has_fg[:, None], fg, solved)
    trust = np.clip((a - 0.15) / 0.5, 0.0, 1.0)
    out = rgb.copy()
    out[ys, xs] = near * (1.0 - trust) + solved * trust
    return out


def make_cutout(image: ImageArray, mask: Gray) -> ImageArray:
    """An RGBA uint8 cut-out of ``image`` with ``mask`` (0..1) as alpha and decontaminated
    edge colours."""
    alpha = np.clip(mask.astype(np.float32), 0.0, 1.0)
    fg = decontaminate(to_float(image), alpha)
    rgba = np.dstack([fg, alpha])
    return np.asarray(np.clip(rgba * 255.0 + 0.5, 0, 255), dtype=np.uint8)


MIN_SUBJECT_FRACTION = 0.003
"""A cut-out covering less than this share of the image is treated as "no product found"."""


def prepare_cutout(image: ImageArray) -> tuple[ImageArray, str]:
    """The product as an RGBA cut-out, and how it was obtained. An RGBA upload with a real
    transparent background is used as it is; anything else is segmented with U²-Net-p and its
    edge colours decontaminated. Raises :class:`EngineError` when no product is found."""
    if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
        raise EngineError(f"expected an 8-bit RGB or RGBA image, got {image.dtype} {image.shape}")
    if has_meaningful_alpha(image):
        rgba, how = np.ascontiguousarray(image), "the image's own alpha channel"
    else:
        alpha = mask_to_alpha(salient_mask(image))
        rgba, how = make_cutout(image[..., :3], alpha), "U²-Net-p salient-object mask"
    if float(np.count_nonzero(rgba[..., 3] > 127)) < MIN_SUBJECT_FRACTION * rgba[..., 3].size:
        raise EngineError("no product found in the image to place in a scene")
    return rgba, how


STRIP_PIXELS = 1_000_000
"""Full-resolution float work on large images is done in horizontal strips of about this many
pixels, so memory stays near ``3 bytes/pixel`` (uint8) plus a few strips of float32."""


def row_strips(h: int, w: int, margin: int = 0) -> Iterator[tuple[int, int, int, int]]:
    """``(y0, y1, e0, e1)`` for each strip: output rows ``y0:y1`` are computed from input rows
    ``e0:e1``, which add up to ``margin`` rows of context on each side (for filters)."""
    rows = max(16, 2 * margin, STRIP_PIXELS // max(1, w))
    for y0 in range(0, h, rows):
        y1 = min(h, y0 + rows)
        yield y0, y1, max(0, y0 - margin), min(h, y1 + margin)


def to_uint8_rounded(rgb: Rgb) -> ImageArray:
    """float 0..1 -> uint8, rounded (no dither: for photos, which have their own noise)."""
    return np.asarray(np.clip(rgb * np.float32(255.0) + np.float32(0.5), 0.0, 255.0), np.uint8)


def decontaminate_image(image: ImageArray, alpha: Gray) -> ImageArray:
    """:func:`decontaminate` for a whole uint8 image, strip by strip (memory stays bounded
    for large photos); returns RGB uint8."""
    h, w = alpha.shape
    r = decontamination_radius(h, w)
    out = np.empty((h, w, 3), dtype=np.uint8)
    for y0, y1, e0, e1 in row_strips(h, w, 4 * r + 1):
        fg = decontaminate(to_float(image[e0:e1]), alpha[e0:e1], r)
        out[y0:y1] = to_uint8_rounded(fg[y0 - e0 : y1 - e0])
    return out


def bounding_box(where: npt.NDArray[np.bool_]) -> Box | None:
    """``(x, y, w, h)`` of the true pixels of ``where``; ``None`` when there are none."""
    rows = np.flatnonzero(where.any(axis=1))
    if rows.size == 0:
        return None
    cols = np.flatnonzero(where.any(axis=0))
    return int(cols[0]), int(rows[0]), int(cols[-1] - cols[0] + 1), int(rows[-1] - rows[0] + 1)


def alpha_box(alpha: Gray, threshold: float = 0.02) -> Box | None:
    """Bounding box ``(x, y, w, h)`` of the pixels with alpha above ``threshold``."""
    return bounding_box(alpha > threshold)


def crop_cutout(rgba: ImageArray) -> ImageArray:
    """Crop an RGBA cut-out to its visible subject (raises ``ValueError`` when it is empty)."""
    box = alpha_box(rgba[..., 3].astype(np.float32) / 255.0)
    if box is None:
        raise ValueError("the cut-out is fully transparent")
    x, y, w, h = box
    return rgba[y : y + h, x : x + w]


def fit_box(
    subject_hw: tuple[int, int],
    canvas_hw: tuple[int, int],
    *,
    height: float,
    base: float,
    max_width: float = 0.78,
    center_x: float = 0.5,
) -> Box:
    """Where a subject of ``subject_hw`` goes on the canvas: scaled so it is ``height`` of the
    canvas tall (or ``max_width`` wide, whichever is smaller), horizontally centred on
    ``center_x`` and standing with its bottom edge at ``base`` (fractions of the canvas)."""
    sh, sw = subject_hw
    ch, cw = canvas_hw
    k = min(height * ch / sh, max_width * cw / sw)
    bw, bh = max(1, round(sw * k)), max(1, round(sh * k))
    bottom = round(base * ch)
    top = max(0, bottom - bh)
    return round(center_x * cw - bw / 2), top, bw, bh


def layer_from_cutout(rgba: ImageArray, box: Box) -> Layer:
    """Scale an RGBA cut-out into ``box`` in premultiplied space (area filter when shrinking,
    bicubic when enlarging)."""
    x, y, bw, bh = box
    a = rgba[..., 3].astype(np.float32) * np.float32(1.0 / 255.0)
    stack = np.dstack([to_float(rgba) * a[..., None], a])
    shrinking = bw * bh < rgba.shape[0] * rgba.shape[1]
    interp = cv2.INTER_AREA if shrinking else cv2.INTER_CUBIC
    scaled = np.asarray(cv2.resize(stack, (bw, bh), interpolation=interp), dtype=np.float32)
    alpha = np.clip(scaled[..., 3], 0.0, 1.0)
    premult = np.clip(scaled[..., :3], 0.0, alpha[..., None])
    return Layer(np.ascontiguousarray(premult), np.ascontiguousarray(alpha), x, y)


def layer_in_place(rgb: Rgb, alpha: Gray) -> Layer:
    """The whole frame as a layer at (0, 0): the subject stays exactly where it was."""
    a = np.clip(alpha.astype(np.float32), 0.0, 1.0)
    return Layer(rgb * a[..., None], a, 0, 0)


def place_layer(
    premult: Rgb,
    alpha: Gray,
    scale: float,
    offset: tuple[float, float],
    canvas_hw: tuple[int, int],
    margin: int = 0,
) -> Layer:
    """A layer in source pixels mapped onto the canvas by ``canvas = scale · p + offset``,
    cropped to what the canvas shows (plus ``margin`` source pixels, so the filter sees
    context at the crop), resized once (area filter when shrinking, bicubic when enlarging)."""
    h, w = canvas_hw
    ih, iw = alpha.shape
    s, (ox, oy) = scale, offset
    fx0, fy0 = max(0.0, -ox / s), max(0.0, -oy / s)
    fx1, fy1 = min(float(iw), (w - ox) / s), min(float(ih), (h - oy) / s)
    ix0, iy0 = max(0, int(fx0) - margin), max(0, int(fy0) - margin)
    ix1, iy1 = min(iw, math.ceil(fx1) + margin), min(ih, math.ceil(fy1) + margin)
    if ix1 <= ix0 or iy1 <= iy0:
        return Layer(np.zeros((1, 1, 3), np.float32), np.zeros((1, 1), np.float32), 0, 0)
    cx0, cy0 = round(ox + s * ix0), round(oy + s * iy0)
    tw, th = max(1, round(s * (ix1 - ix0))), max(1, round(s * (iy1 - iy0)))
    stack = np.dstack([premult[iy0:iy1, ix0:ix1], alpha[iy0:iy1, ix0:ix1]])
    interp = cv2.INTER_AREA if s < 1.0 else cv2.INTER_CUBIC
    scaled = np.asarray(cv2.resize(stack, (tw, th), interpolation=interp), dtype=np.float32)
    a = np.clip(scaled[..., 3], 0.0, 1.0)
    pm = np.clip(scaled[..., :3], 0.0, a[..., None])
    return Layer(np.ascontiguousarray(pm), np.ascontiguousarray(a), cx0, cy0)


# --- canvas helpers --------------------------------------------------------------------------


def clip(
    canvas_hw: tuple[int, int], x: int, y: int, h: int, w: int
) -> tuple[slice, slice, slice, slice] | None:
    """Canvas and source slices for pasting an ``h`` × ``w`` patch at (x, y), or ``None`` when
    it lies fully outside."""
    ch, cw = canvas_hw
    cx0, cy0 = max(0, x), max(0, y)
    cx1, cy1 = min(cw, x + w), min(ch, y + h)
    if cx0 >= cx1 or cy0 >= cy1:
        return None
    return (
        slice(cy0, cy1),
        slice(cx0, cx1),
        slice(cy0 - y, cy1 - y),
        slice(cx0 - x, cx1 - x),
    )


def coverage(canvas_hw: tuple[int, int], layer: Layer) -> Gray:
    """The layer's alpha on a canvas-sized field."""
    out = np.zeros(canvas_hw, np.float32)
    s = clip(canvas_hw, layer.x, layer.y, *layer.alpha.shape)
    if s is not None:
        cy, cx, ly, lx = s
        out[cy, cx] = layer.alpha[ly, lx]
    return out


# --- colour harmonisation --------------------------------------------------------------------


def _luma(rgb: Rgb) -> Gray:
    out: Gray = rgb @ _LUMA
    return out


@dataclass(frozen=True)
class Harmony:
    """A colour correction for the subject: per-channel ``gain`` then a black-level ``lift``
    (``x' = lift + x · (1 - lift)``), applied to premultiplied colour."""

    gain: tuple[float, float, float]
    lift: float

    def apply(self, premult: Rgb, alpha: Gray) -> Rgb:
        """The corrected premultiplied colour (clipped to the valid ``0..alpha`` range)."""
        g = np.asarray(self.gain, dtype=np.float32) * np.float32(1.0 - self.lift)
        out = premult * g + (np.float32(self.lift) * alpha)[..., None]
        return np.asarray(np.clip(out, 0.0, alpha[..., None]), dtype=np.float32)


def harmony_for(
    layer: Layer, backdrop: Rgb, light: tuple[float, float, float], amount: float
) -> Harmony | None:
    """How to nudge the subject towards the scene's light, so it does not look pasted in
    (``None`` when there is nothing to do):

    - white balance: multiply by the light's colour, normalised to unit mean, at ``amount``;
    - exposure: move the subject's mean brightness a fraction towards the backdrop's (capped
      at -8 % / +4 %: a dark scene should not turn a product into a silhouette);
    - black level: lift (or lower) the subject's darkest tones a little towards the
      backdrop's (at most 2 % of full scale), as bounce light does in a bright, hazy scene.

    Statistics come from a subsample of about 40 000 pixels, so the cost does not grow with
    the image."""
    if amount <= 0:
        return None
    step = max(1, int(math.sqrt(layer.alpha.size / 40000)))
    a_s = layer.alpha[::step, ::step]
    keep = a_s > 0.5
    if not keep.any():
        return None
    colour = layer.premult[::step, ::step][keep] / a_s[keep][:, None]
    subject_y = colour @ _LUMA
    bg_step = max(1, int(math.sqrt(backdrop.shape[0] * backdrop.shape[1] / 40000)))
    bg_y = _luma(backdrop[::bg_step, ::bg_step]).ravel()

    light_v = np.asarray(light, dtype=np.float32)
    wb = 1.0 + amount * (light_v / max(float(light_v.mean()), 1e-3) - 1.0)
    ratio = float(bg_y.mean()) / max(float(subject_y.mean()), 1e-3)
    exposure = float(np.clip(1.0 + 0.5 * amount * (ratio - 1.0), 0.92, 1.04))
    black_gap = float(np.percentile(bg_y, 1) - np.percentile(subject_y, 1))
    lift = float(np.clip(amount * black_gap, -0.02, 0.02))
    g = wb * exposure
    return Harmony((float(g[0]), float(g[1]), float(g[2])), lift)


def harmonise(
    layer: Layer, backdrop: Rgb, light: tuple[float, float, float], amount: float
) -> Layer:
    """The layer with :func:`harmony_for`'s correction applied."""
    harmony = harmony_for(layer, backdrop, light, amount)
    if harmony is None:
        return layer
    return Layer(harmony.apply(layer.premult, layer.alpha), layer.alpha, layer.x, layer.y)


# --- final assembly --------------------------------------------------------------------------


def paste(canvas: Rgb, layer: Layer) -> None:
    """Premultiplied "over": ``canvas = premult + canvas · (1 - alpha)``."""
    s = clip((canvas.shape[0], canvas.shape[1]), layer.x, layer.y, *layer.alpha.shape)
    if s is None:
        return
    cy, cx, ly, lx = s
    region = canvas[cy, cx]
    canvas[cy, cx] = layer.premult[ly, lx] + region * (1.0 - layer.alpha[ly, lx])[..., None]


def to_uint8(rgb: Rgb, rng: np.random.Generator) -> ImageArray:
    """float 0..1 -> uint8 with random-threshold rounding (one threshold per pixel, shared by
    the channels): smooth gradients such as studio sweeps would otherwise show 8-bit bands."""
    h, w = rgb.shape[:2]
    noise = rng.random((h, w, 1), dtype=np.float32)
    out = np.clip(rgb * np.float32(255.0) + noise, 0.0, 255.0)
    return np.asarray(out, dtype=np.uint8)
