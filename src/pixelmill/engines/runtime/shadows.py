"""The one shadow family and the floor reflection, for every engine that composites a subject
(scenes, silo, replace-background, background removal's shadow option, product photos, try-on,
reference avatars, the drawn avatars, ads): a subject standing on a floor gets a
:func:`contact_shadow` where it touches and a wider, paler :func:`cast_shadow` behind it
(together :func:`add_floor_shadow`); a floating subject the same shadow a little below it
(:func:`floating_shadow`); a flat lay an offset, blurred :func:`add_drop_shadow`; a product held
in front of a body a drop shadow that falls on the body only (:func:`shadow_on`); a product on
an ad a soft shadow just under it (:func:`under_shadow`); a glossy floor :func:`add_reflection`.
A drawn figure that is no layer (a vector avatar) gets the soft shadow of its footprint
(:func:`footprint_shadow`); a cut-out on its own canvas, the light its shadow leaves
(:func:`shadow_transmittance`), which darkens a background or becomes semi-transparent black
pixels of a transparent result (:func:`transparent_shadow`).

Shadows are drawn by darkening a float32 canvas (``canvas *= 1 - opacity·shade``) and computed
only inside the subject's neighbourhood (big blurs at a reduced scale), so the cost grows with
the subject, not with the canvas. A canvas may be an ``(h, w, 1)`` field of ones: what is left
is the light that reaches each pixel (background removal's transmittance map).
"""

from __future__ import annotations

import math
from typing import Any, Literal, NamedTuple

import cv2
import numpy as np

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.layers import Box, Layer, alpha_box, bounding_box, clip, coverage
from pixelmill.engines.runtime.textures import Gray, Rgb

ShadowKind = Literal["floor", "drop", "none"]
"""What a scene gives its subject: floor (contact and cast) shadows, a drop shadow, or none."""


def _darken(canvas: Rgb, shade: Gray, x: int, y: int, opacity: float) -> None:
    """Multiply the canvas by ``1 - opacity·shade`` where ``shade`` (placed at x, y) overlaps."""
    s = clip((canvas.shape[0], canvas.shape[1]), x, y, shade.shape[0], shade.shape[1])
    if s is None:
        return
    cy, cx, sy, sx = s
    canvas[cy, cx] *= (1.0 - opacity * shade[sy, sx])[..., None]


def soften(field: Gray, sigma: float) -> Gray:
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


def subject_extent(layer: Layer, threshold: float = 0.5) -> Box | None:
    """The solid part of the subject, ``(x, y, w, h)`` in canvas pixels."""
    box = alpha_box(layer.alpha, threshold)
    if box is None:
        return None
    x, y, w, h = box
    return x + layer.x, y + layer.y, w, h


class _Standing(NamedTuple):
    x: int
    width: int
    height: int
    base: int
    """The row the subject stands on."""
    long_side: int
    """The canvas's long side."""
    silhouette: Gray


def _standing(canvas: Rgb, layer: Layer, strength: float) -> _Standing | None:
    """Where the subject stands on a floor inside the frame, and its silhouette (``None``:
    nothing to draw, its base is cut off by the bottom of the frame)."""
    ext = subject_extent(layer)
    if ext is None or strength <= 0:
        return None
    sx, sy, sw, sh = ext
    ch, cw = canvas.shape[:2]
    if sy + sh >= ch - 1:
        return None
    lx, ly = sx - layer.x, sy - layer.y
    return _Standing(sx, sw, sh, sy + sh, max(ch, cw), layer.alpha[ly : ly + sh, lx : lx + sw])


def cast_shadow(canvas: Rgb, layer: Layer, strength: float = 1.0) -> None:
    """The wide, pale shadow behind a subject standing on a floor, lit from the front and
    above: its silhouette flattened to 14 % of its height, stronger near the base."""
    at = _standing(canvas, layer, strength)
    if at is None:
        return
    sx, sw, sh, base, long_side, sil = at
    cast_h = max(2, round(sh * 0.14))
    cast = cv2.resize(sil, (sw, cast_h), interpolation=cv2.INTER_AREA)
    cast = cast * np.linspace(0.35, 1.0, cast_h, dtype=np.float32)[:, None]
    sigma = 0.05 * sw + 0.004 * long_side
    pad = math.ceil(3 * sigma) + 1
    cast = soften(_padded(np.asarray(cast, np.float32), pad), sigma)
    _darken(canvas, cast, sx - pad, base - cast_h + round(0.02 * sh) - pad, 0.35 * strength)


def contact_shadow(canvas: Rgb, layer: Layer, strength: float = 1.0) -> None:
    """The tight, dark shadow where a standing subject touches the floor: the footprint (the
    bottom 6 % of the silhouette, blurred sideways) times a thin vertical Gaussian centred on
    the base line, a soft-ended ellipse just below and beside the subject."""
    at = _standing(canvas, layer, strength)
    if at is None:
        return
    sx, sw, sh, base, long_side, sil = at
    foot_rows = max(1, round(sh * 0.06))
    foot = sil[-foot_rows:].max(axis=0).astype(np.float32)
    sigma_x = 0.03 * sw + 0.5
    pad_c = math.ceil(3 * sigma_x) + 1
    foot = np.pad(foot, pad_c)
    foot = cv2.GaussianBlur(foot[None, :], (0, 0), sigmaX=sigma_x, sigmaY=0.1)[0]
    half = max(1.0, 0.012 * sh + 0.001 * long_side)
    rows = np.arange(-math.ceil(3 * half), math.ceil(3 * half) + 1, dtype=np.float32)
    profile = np.exp(-0.5 * (rows / half) ** 2)
    contact = (profile[:, None] * foot[None, :]).astype(np.float32)
    _darken(canvas, contact, sx - pad_c, base - len(rows) // 2, 0.55 * strength)


def add_floor_shadow(canvas: Rgb, layer: Layer, strength: float = 1.0) -> None:
    """Shadows of a subject standing on a floor: the cast shadow, then the contact shadow.
    Nothing is drawn when the subject's base is cut off by the bottom of the frame."""
    cast_shadow(canvas, layer, strength)
    contact_shadow(canvas, layer, strength)


def floating_shadow(canvas: Rgb, layer: Layer, gap: int, strength: float) -> None:
    """The floor shadows of a subject hovering ``gap`` pixels above the floor."""
    add_floor_shadow(canvas, Layer(layer.premult, layer.alpha, layer.x, layer.y + gap), strength)


def footprint_shadow(
    canvas: Rgb, footprint: Gray, x: int, y: int, sigma: float, opacity: float
) -> None:
    """The soft shadow of a footprint drawn on the floor (coverage, top-left corner at x, y),
    blurred by a Gaussian of ``sigma`` pixels at full resolution: under a drawn avatar's feet,
    an ellipse as wide as its stance."""
    if footprint.size == 0 or opacity <= 0:
        return
    pad = math.ceil(3 * sigma) + 1
    shade = np.asarray(cv2.GaussianBlur(_padded(footprint, pad), (0, 0), sigma), np.float32)
    _darken(canvas, shade, x - pad, y - pad, opacity)


def under_shadow(canvas: Rgb, alpha: Gray, x: int, y: int, strength: float) -> None:
    """The soft shadow of a product standing on a flat ad background (its alpha at x, y): the
    alpha blurred by 3.5 % of its height, 2.5 % of its height lower, ``strength`` times as
    dark and never past 90 %."""
    h = alpha.shape[0]
    sigma = max(2.0, 0.035 * h)
    pad = int(3 * sigma)
    field = np.asarray(cv2.GaussianBlur(_padded(alpha, pad), (0, 0), sigma), np.float32)
    shade = np.clip(field * strength, 0.0, 0.9)
    _darken(canvas, shade, x - pad, y - pad + round(0.025 * h), 1.0)


def add_drop_shadow(canvas: Rgb, layer: Layer, strength: float = 1.0) -> None:
    """The shadow of an object lying on a flat surface lit from the upper left (flat lays):
    the alpha, offset down and right, blurred."""
    if strength <= 0:
        return
    ch, cw = canvas.shape[:2]
    long_side = max(ch, cw)
    sigma = 0.012 * long_side
    pad = math.ceil(3 * sigma) + 1
    shade = soften(_padded(layer.alpha, pad), sigma)
    dx, dy = round(0.012 * long_side), round(0.018 * long_side)
    _darken(canvas, shade, layer.x - pad + dx, layer.y - pad + dy, 0.45 * strength)


def shadow_on(canvas: Rgb, caster: Layer, receiver: Gray, strength: float) -> None:
    """A soft shadow of ``caster`` falling on ``receiver`` only (a product held in front of
    the body shades the body, not the wall far behind): the caster's alpha, offset down and
    right by a little of its size, blurred, times the receiver's coverage."""
    h, w = receiver.shape
    size = max(caster.alpha.shape)
    dx, dy = round(0.05 * size), round(0.08 * size)
    field = coverage((h, w), Layer(caster.premult, caster.alpha, caster.x + dx, caster.y + dy))
    soft = soften(field, max(1.0, 0.06 * size))
    canvas *= (1.0 - strength * soft * receiver)[..., None]


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
    s = clip((ch, canvas.shape[1]), sx, base, rows, sw)
    if s is None:
        return
    cy, cx, ry, rx = s
    region = canvas[cy, cx]
    canvas[cy, cx] = pm[ry, rx] + region * (1.0 - a[ry, rx])[..., None]


FLOAT_GAP = 0.06
"""A floating subject hovers this fraction of its height above its shadow."""

HARD_STRENGTH = 1.7
"""A hard shadow is the soft one at this strength: a near-black contact line and a dark cast
shadow, as under a single strong light."""


def shadow_transmittance(placed: ImageArray, kind: str) -> tuple[Gray | None, str]:
    """How much light reaches each pixel of a cut-out's canvas (straight-alpha RGBA uint8; 1:
    all, less under the shadow) for a ``kind`` shadow (soft, hard, floating) of its subject,
    and what was drawn. ``None`` when nothing could be (a floor shadow needs the subject's
    base inside the canvas)."""
    alpha = placed[..., 3]
    box = bounding_box(alpha > 127)
    if box is None:
        return None, "none: the result has no subject"
    x, y, w, h = box
    a = alpha[y : y + h, x : x + w].astype(np.float32) * np.float32(1.0 / 255.0)
    # Shadows read only the layer's alpha; its colour is never looked at.
    dummy: Any = np.broadcast_to(np.float32(0.0), (*a.shape, 3))
    ch, cw = alpha.shape
    t = np.ones((ch, cw, 1), dtype=np.float32)
    base = y + h
    if kind == "floating":
        gap = max(2, round(FLOAT_GAP * h))
        if base + gap >= ch - 1:
            return None, "none: no room below the subject for a floating shadow"
        floating_shadow(t, Layer(dummy, a, x, y), gap, 0.55)
        drawn = f"floating: a soft shadow {gap} px below the subject"
    else:
        if base >= ch - 1:
            return None, "none: the subject's base touches the bottom edge (no floor to cast on)"
        add_floor_shadow(t, Layer(dummy, a, x, y), HARD_STRENGTH if kind == "hard" else 1.0)
        drawn = f"{kind}: contact shadow and cast shadow"
    return np.asarray(t[..., 0], dtype=np.float32), drawn


def transparent_shadow(
    placed: ImageArray, transmittance: Gray, shade: Box, subject: Box | None
) -> ImageArray:
    """A transparent result (straight-alpha RGBA uint8) with the shadow (``transmittance``
    below 1 inside ``shade``) as semi-transparent black: over any background it darkens exactly
    as an opaque composite does (``alpha = a + (1 - t)(1 - a)``)."""
    out = placed.copy()
    x0, y0, sw, sh = shade
    x1, y1 = x0 + sw, y0 + sh
    if subject is not None:
        x0, y0 = min(x0, subject[0]), min(y0, subject[1])
        x1, y1 = max(x1, subject[0] + subject[2]), max(y1, subject[1] + subject[3])
    region = placed[y0:y1, x0:x1]
    a = region[..., 3:].astype(np.float32) * np.float32(1.0 / 255.0)
    t = transmittance[y0:y1, x0:x1, None]
    total = a + (1.0 - t) * (1.0 - a)
    rgb = region[..., :3].astype(np.float32) * a / np.maximum(total, 1e-6)
    out[y0:y1, x0:x1, :3] = np.clip(rgb + 0.5, 0.0, 255.0).astype(np.uint8)
    out[y0:y1, x0:x1, 3] = np.clip(total[..., 0] * 255.0 + 0.5, 0.0, 255.0).astype(np.uint8)
    return out
