"""Compositing a cut-out subject onto a backdrop: edge decontamination, premultiplied-alpha
scaling and placement, contact and drop shadows, floor reflections, light colour harmonisation
and the final dithered conversion to 8 bits.

Conventions: float32 sRGB 0..1 throughout. A :class:`Layer` holds the subject as premultiplied
colour (``rgb * alpha``) plus alpha, positioned on the canvas. Premultiplied colour is what makes
resizing and blending correct at soft edges: averaging unpremultiplied colours would mix the
invisible colour of transparent pixels into the edge and leave a fringe.

Shadows and reflections are computed only inside the subject's neighbourhood (big blurs at a
reduced scale), so the cost grows with the subject, not with the canvas.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.textures import Gray, Rgb
from pixelmill.engines.scenes.backdrops import Backdrop

ShadowKind = Literal["floor", "drop", "none"]
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


def alpha_box(alpha: Gray, threshold: float = 0.02) -> Box | None:
    """Bounding box ``(x, y, w, h)`` of the pixels with alpha above ``threshold``."""
    rows = np.flatnonzero((alpha > threshold).any(axis=1))
    if rows.size == 0:
        return None
    cols = np.flatnonzero((alpha > threshold).any(axis=0))
    return int(cols[0]), int(rows[0]), int(cols[-1] - cols[0] + 1), int(rows[-1] - rows[0] + 1)


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


# --- canvas helpers --------------------------------------------------------------------------


def _clip(
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


def _darken(canvas: Rgb, shade: Gray, x: int, y: int, opacity: float) -> None:
    """Multiply the canvas by ``1 - opacity·shade`` where ``shade`` (placed at x, y) overlaps."""
    s = _clip((canvas.shape[0], canvas.shape[1]), x, y, shade.shape[0], shade.shape[1])
    if s is None:
        return
    cy, cx, sy, sx = s
    canvas[cy, cx] *= (1.0 - opacity * shade[sy, sx])[..., None]


def _soft(field: Gray, sigma: float) -> Gray:
    """Gaussian blur; big blurs run on a downscaled copy (a shadow has no fine detail, and a
    σ = 40 kernel at full size would cost more than the rest of the scene)."""
    if sigma < 0.5:
        return field
    k = max(1, int(sigma // 3))
    if k == 1:
        return np.asarray(cv2.GaussianBlur(field, (0, 0), sigma), dtype=np.float32)
    h, w = field.shape
    small = cv2.resize(field, (max(1, w // k), max(1, h // k)), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), sigma / k)
    return np.asarray(cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR), np.float32)


def _padded(field: Gray, pad: int) -> Gray:
    return np.asarray(
        cv2.copyMakeBorder(field, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0.0), np.float32
    )


# --- shadows and reflections -----------------------------------------------------------------


def subject_extent(layer: Layer, threshold: float = 0.5) -> Box | None:
    """The solid part of the subject, ``(x, y, w, h)`` in canvas pixels."""
    box = alpha_box(layer.alpha, threshold)
    if box is None:
        return None
    x, y, w, h = box
    return x + layer.x, y + layer.y, w, h


def add_floor_shadow(canvas: Rgb, layer: Layer, strength: float = 1.0) -> None:
    """Shadows of a subject standing on a floor, lit from the front and above: a tight, dark
    contact shadow where it touches the floor and a wider, paler cast shadow behind it (its
    silhouette squashed onto the floor plane, fading with distance from the base). Nothing is
    drawn when the subject's base is cut off by the bottom of the frame."""
    ext = subject_extent(layer)
    if ext is None or strength <= 0:
        return
    sx, sy, sw, sh = ext
    ch, cw = canvas.shape[:2]
    base = sy + sh
    if base >= ch - 1:
        return
    lx, ly = sx - layer.x, sy - layer.y
    sil = layer.alpha[ly : ly + sh, lx : lx + sw]

    # Cast shadow: the silhouette flattened to 14 % of its height, stronger near the base.
    cast_h = max(2, round(sh * 0.14))
    cast = cv2.resize(sil, (sw, cast_h), interpolation=cv2.INTER_AREA)
    cast = cast * np.linspace(0.35, 1.0, cast_h, dtype=np.float32)[:, None]
    sigma = 0.05 * sw + 0.004 * max(ch, cw)
    pad = math.ceil(3 * sigma) + 1
    cast = _soft(_padded(np.asarray(cast, np.float32), pad), sigma)
    _darken(canvas, cast, sx - pad, base - cast_h + round(0.02 * sh) - pad, 0.35 * strength)

    # Contact shadow: the footprint (the bottom 6 % of the silhouette, blurred sideways) times
    # a thin vertical Gaussian centred on the base line: a dark, soft-ended ellipse that shows
    # just below and beside the subject where it touches the floor.
    foot_rows = max(1, round(sh * 0.06))
    foot = sil[-foot_rows:].max(axis=0).astype(np.float32)
    sigma_x = 0.03 * sw + 0.5
    pad_c = math.ceil(3 * sigma_x) + 1
    foot = np.pad(foot, pad_c)
    foot = cv2.GaussianBlur(foot[None, :], (0, 0), sigmaX=sigma_x, sigmaY=0.1)[0]
    half = max(1.0, 0.012 * sh + 0.001 * max(ch, cw))
    rows = np.arange(-math.ceil(3 * half), math.ceil(3 * half) + 1, dtype=np.float32)
    profile = np.exp(-0.5 * (rows / half) ** 2)
    contact = (profile[:, None] * foot[None, :]).astype(np.float32)
    _darken(canvas, contact, sx - pad_c, base - len(rows) // 2, 0.55 * strength)


def add_drop_shadow(canvas: Rgb, layer: Layer, strength: float = 1.0) -> None:
    """The shadow of an object lying on a flat surface lit from the upper left (flat lays):
    the alpha, offset down and right, blurred."""
    if strength <= 0:
        return
    ch, cw = canvas.shape[:2]
    long_side = max(ch, cw)
    sigma = 0.012 * long_side
    pad = math.ceil(3 * sigma) + 1
    shade = _soft(_padded(layer.alpha, pad), sigma)
    dx, dy = round(0.012 * long_side), round(0.018 * long_side)
    _darken(canvas, shade, layer.x - pad + dx, layer.y - pad + dy, 0.45 * strength)


def add_reflection(canvas: Rgb, layer: Layer, amount: float) -> None:
    """A mirror image of the subject's lower part on a glossy floor, flipped about its base,
    fading to nothing over 40 % of the subject's height."""
    ext = subject_extent(layer)
    if ext is None or amount <= 0:
        return
    sx, sy, sw, sh = ext
    ch = canvas.shape[0]
    base = sy + sh
    rows = min(round(0.4 * sh), ch - base)
    if rows < 2:
        return
    lx, ly = sx - layer.x, sy - layer.y
    bottom = ly + sh
    a = layer.alpha[bottom - rows : bottom, lx : lx + sw][::-1]
    pm = layer.premult[bottom - rows : bottom, lx : lx + sw][::-1]
    fade = amount * (1.0 - np.linspace(0.0, 1.0, rows, dtype=np.float32)) ** 1.6
    a = a * fade[:, None]
    pm = pm * fade[:, None, None]
    s = _clip((ch, canvas.shape[1]), sx, base, rows, sw)
    if s is None:
        return
    cy, cx, ry, rx = s
    region = canvas[cy, cx]
    canvas[cy, cx] = pm[ry, rx] + region * (1.0 - a[ry, rx])[..., None]


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
    s = _clip((canvas.shape[0], canvas.shape[1]), layer.x, layer.y, *layer.alpha.shape)
    if s is None:
        return
    cy, cx, ly, lx = s
    region = canvas[cy, cx]
    canvas[cy, cx] = layer.premult[ly, lx] + region * (1.0 - layer.alpha[ly, lx])[..., None]


def composite(
    backdrop: Backdrop,
    layer: Layer,
    *,
    shadow: ShadowKind = "floor",
    shadow_strength: float = 1.0,
    reflection: float = 0.0,
    harmonise_amount: float = 0.12,
) -> Rgb:
    """Backdrop + shadow + reflection + (harmonised) subject, as a new float32 image."""
    canvas = backdrop.rgb.copy()
    if shadow == "floor":
        add_floor_shadow(canvas, layer, shadow_strength)
    elif shadow == "drop":
        add_drop_shadow(canvas, layer, shadow_strength)
    subject = harmonise(layer, backdrop.rgb, backdrop.light, harmonise_amount)
    if reflection > 0:
        add_reflection(canvas, subject, reflection)
    paste(canvas, subject)
    return canvas


def to_uint8(rgb: Rgb, rng: np.random.Generator) -> ImageArray:
    """float 0..1 -> uint8 with random-threshold rounding (one threshold per pixel, shared by
    the channels): smooth gradients such as studio sweeps would otherwise show 8-bit bands."""
    h, w = rgb.shape[:2]
    noise = rng.random((h, w, 1), dtype=np.float32)
    out = np.clip(rgb * np.float32(255.0) + noise, 0.0, 255.0)
    return np.asarray(out, dtype=np.uint8)
