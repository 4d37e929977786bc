"""Procedural backdrops: studio sweeps, flat colours and gradients, textured surfaces seen in
perspective, and simple environments (sky, sunset, beach, bokeh lights, rooms, a shelf).

No generative model is involved: every backdrop is painted from gradients, value noise and a
few shapes, deterministically for a ``numpy.random.Generator`` state. All painters share one
signature (:class:`Painter`) so the scene catalogue and the replace-background prompt parser can
use them interchangeably.

Geometry convention: ``horizon`` is the fraction of the image height where the wall (or sky)
meets the floor (table, sand). Objects stand below it; the compositor puts a contact shadow on
the floor there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import cv2
import numpy as np

from pixelmill.engines.runtime import textures as tx
from pixelmill.engines.runtime.palette import Color, mix, scale
from pixelmill.engines.runtime.textures import Gray, Rgb

WHITE: Color = (1.0, 1.0, 1.0)


@dataclass(frozen=True)
class Backdrop:
    """A painted background: ``rgb`` is ``(H, W, 3)`` float32 sRGB 0..1; ``horizon`` is where
    the floor starts (fraction of the height, 0 for a top-down/flat backdrop); ``light`` is the
    colour of the scene's key light, used to harmonise the subject's colour."""

    rgb: Rgb
    horizon: float
    light: Color
    description: str


class Painter(Protocol):
    """A backdrop generator: ``(h, w, rng, horizon=..., color=...)`` -> :class:`Backdrop`.
    ``color`` tints the backdrop's main surface where that makes sense (a wall, a sweep, a
    fabric) and is ignored where it does not (a sky, a beach)."""

    def __call__(
        self, h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
    ) -> Backdrop: ...


# --- small field helpers ---------------------------------------------------------------------


def _axes(h: int, w: int) -> tuple[Gray, Gray]:
    """Column ``y`` (H, 1) and row ``x`` (1, W) coordinates, each 0..1."""
    y = np.linspace(0.0, 1.0, h, dtype=np.float32)[:, None]
    x = np.linspace(0.0, 1.0, w, dtype=np.float32)[None, :]
    return y, x


def _smoothstep(e0: float, e1: float, v: Gray) -> Gray:
    t = np.clip((v - e0) / (e1 - e0), 0.0, 1.0)
    out: Gray = t * t * (3.0 - 2.0 * t)
    return out


def _glow(h: int, w: int, cx: float, cy: float, rx: float, ry: float) -> Gray:
    """A Gaussian blob centred at (cx, cy) (fractions), radii as fractions of width/height."""
    y, x = _axes(h, w)
    out: Gray = np.exp(-(((x - cx) / rx) ** 2)) * np.exp(-(((y - cy) / ry) ** 2))
    return out


def _vignette(h: int, w: int, strength: float) -> Gray:
    y, x = _axes(h, w)
    out = 1.0 - strength * (((x - 0.5) / 0.72) ** 2 + ((y - 0.5) / 0.8) ** 2)
    return np.asarray(out, dtype=np.float32)


def _paint(shade: Gray, color: Color) -> Rgb:
    out: Rgb = shade[..., None] * np.asarray(color, dtype=np.float32)
    return out


def _rows(h: int, horizon: float) -> int:
    return round(min(max(horizon, 0.0), 1.0) * h)


def _finish(rgb: Rgb) -> Rgb:
    return np.clip(rgb, 0.0, 1.0).astype(np.float32, copy=False)


def _on_plane(texture: Rgb, h: int, w: int, hy: int, spread: float = 0.3) -> Rgb:
    """Project a flat ``texture`` onto the floor rows ``hy..h`` of an ``h`` × ``w`` image, as a
    plane seen from above the front edge: the far edge (at the horizon) covers the whole texture
    width, the near edge only ``2 * spread`` of it, so the texture foreshortens towards the
    horizon like a real table top."""
    th, tw = texture.shape[:2]
    rows = max(1, h - hy)
    src = np.array(
        [[0, 0], [tw, 0], [tw * (0.5 + spread), th], [tw * (0.5 - spread), th]], dtype=np.float32
    )
    dst = np.array([[0, 0], [w, 0], [w, rows], [0, rows]], dtype=np.float32)
    m = cv2.getPerspectiveTransform(src, dst)
    plane = cv2.warpPerspective(
        texture, m, (w, rows), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT
    )
    return np.asarray(plane, dtype=np.float32)


def _window_light(h: int, w: int, rng: np.random.Generator) -> Gray:
    """Sunlight through a four-pane window falling obliquely on a wall: sheared bright panes
    with soft edges, drawn at low resolution (the result is blurry anyway) and upsampled."""
    sh, sw = max(8, h // 4), max(8, w // 4)
    canvas = np.zeros((sh, sw), dtype=np.float32)
    cx = rng.uniform(0.25, 0.75) * sw
    top = rng.uniform(0.05, 0.2) * sh
    pane_w, pane_h = 0.16 * sw, 0.22 * sh
    shear = rng.choice([-1.0, 1.0]) * rng.uniform(0.25, 0.5) * pane_w
    gap = max(1.0, 0.018 * sw)
    for row in range(2):
        for col in range(2):
            x0 = cx - pane_w - gap / 2 + col * (pane_w + gap)
            y0 = top + row * (pane_h + gap)
            d0 = shear * (row * (pane_h + gap)) / pane_h
            d1 = shear * (row * (pane_h + gap) + pane_h) / pane_h
            quad = np.array(
                [[x0 + d0, y0], [x0 + pane_w + d0, y0], [x0 + pane_w + d1, y0 + pane_h],
                 [x0 + d1, y0 + pane_h]],
                dtype=np.int32,
            )  # fmt: skip
            cv2.fillConvexPoly(canvas, quad, 1.0, lineType=cv2.LINE_AA)
    soft = cv2.GaussianBlur(canvas, (0, 0), max(1.0, 0.02 * sw))
    return np.asarray(cv2.resize(soft, (w, h), interpolation=cv2.INTER_LINEAR), np.float32)


def _bokeh(
    h: int, w: int, rng: np.random.Generator, colors: list[Color], count: int, size: float
) -> Rgb:
    """Out-of-focus point lights: soft discs with a slightly brighter rim, added together.
    Rendered at a long side of 384 px and upsampled, since bokeh has no fine detail."""
    scale_f = min(1.0, 384.0 / max(h, w))
    sh, sw = max(8, round(h * scale_f)), max(8, round(w * scale_f))
    out = np.zeros((sh, sw, 3), dtype=np.float32)
    long_side = max(sh, sw)
    for _ in range(count):
        r = float(rng.uniform(0.4, 1.0) * size * long_side)
        cx, cy = float(rng.uniform(0, sw)), float(rng.uniform(0, sh))
        intensity = float(rng.uniform(0.25, 0.8))
        color = np.asarray(colors[int(rng.integers(len(colors)))], dtype=np.float32)
        x0, x1 = max(0, int(cx - r - 2)), min(sw, int(cx + r + 3))
        y0, y1 = max(0, int(cy - r - 2)), min(sh, int(cy + r + 3))
        if x0 >= x1 or y0 >= y1:
            continue
        yy = np.arange(y0, y1, dtype=np.float32)[:, None] - cy
        xx = np.arange(x0, x1, dtype=np.float32)[None, :] - cx
        d = np.sqrt(xx * xx + yy * yy) / r
        disc = np.clip((1.0 - d) * r * 0.8, 0.0, 1.0) * (0.8 + 0.2 * np.clip(d, 0.0, 1.0) ** 4)
        out[y0:y1, x0:x1] += disc[..., None] * (color * intensity)
    soft = cv2.GaussianBlur(out, (0, 0), 0.8)
    return np.asarray(cv2.resize(soft, (w, h), interpolation=cv2.INTER_CUBIC), dtype=np.float32)


def _wall(h: int, w: int, rng: np.random.Generator, color: Color, window: bool) -> Rgb:
    """A painted plaster wall: faint mottling, darker towards the top, optional window light."""
    y, _ = _axes(h, w)
    mottle = tx.fbm(h, w, rng, cells=4.0, octaves=4)
    shade = 0.8 + 0.14 * y + 0.04 * (mottle - 0.5)
    rgb = _paint(shade, color)
    if window:
        light = _window_light(h, w, rng)
        rgb += (0.16 * light)[..., None] * np.asarray(mix(color, WHITE, 0.7), dtype=np.float32)
    return rgb


def _join_wall_floor(wall: Rgb, floor: Rgb, hy: int, ao: float = 0.3) -> Rgb:
    """Stack a wall (rows ``< hy``) over a floor (rows ``>= hy``), darkening the wall just
    above the join (ambient occlusion in the corner), which sells the depth of the seam."""
    h = wall.shape[0]
    out = wall.copy()
    out[hy:] = floor
    if 0 < hy < h:
        band = max(2, h // 40)
        y0 = max(0, hy - band)
        ramp = np.linspace(0.0, 1.0, hy - y0, dtype=np.float32) ** 2
        out[y0:hy] *= (1.0 - ao * ramp)[:, None, None]
    return out


# --- studio and flat backdrops ---------------------------------------------------------------


def studio_sweep(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """A seamless paper sweep: wall and floor are one surface curving at the horizon, so the
    shading changes smoothly there (no line); a soft key-light glow behind the subject and a
    vignette."""
    c = color or (0.96, 0.96, 0.955)
    y, _ = _axes(h, w)
    hz = min(max(horizon, 0.2), 0.9)
    wall = 0.8 + 0.17 * np.clip(y / hz, 0.0, 1.0) ** 0.8
    floor = 0.97 - 0.08 * np.clip((y - hz) / (1.0 - hz), 0.0, 1.0)
    t = _smoothstep(hz - 0.1, hz + 0.1, y)
    shade = (wall * (1.0 - t) + floor * t) + 0.07 * _glow(h, w, 0.5, hz - 0.05, 0.45, 0.35)
    shade = shade * _vignette(h, w, 0.16)
    jitter = 1.0 + 0.006 * (tx.value_noise(h, w, rng, 3.0, 3.0) - 0.5)
    return Backdrop(_finish(_paint(shade * jitter, c)), hz, mix(WHITE, c, 0.25), "studio sweep")


def solid_color(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """A flat colour with only a faint (±3 %) radial fall-off, so it does not look digital."""
    c = color or (0.95, 0.95, 0.95)
    shade = 1.0 + 0.03 * (_glow(h, w, 0.5, 0.45, 0.6, 0.6) - 0.5)
    return Backdrop(_finish(_paint(shade, c)), horizon, mix(WHITE, c, 0.25), "solid colour")


def linear_gradient(h: int, w: int, first: Color, second: Color, angle_deg: float) -> Rgb:
    """A linear gradient ``first`` -> ``second`` along ``angle_deg`` (90 = top to bottom)."""
    y, x = _axes(h, w)
    a = math.radians(angle_deg)
    t = x * math.cos(a) + y * math.sin(a)
    lo = min(0.0, math.cos(a)) + min(0.0, math.sin(a))
    hi = max(0.0, math.cos(a)) + max(0.0, math.sin(a))
    t = np.clip((t - lo) / (hi - lo), 0.0, 1.0)
    a0 = np.asarray(first, dtype=np.float32)
    a1 = np.asarray(second, dtype=np.float32)
    out: Rgb = a0 + t[..., None] * (a1 - a0)
    return out


def gradient(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """A diagonal two-colour gradient; the second colour is a lighter, hue-neighbour of the
    first (or a random pastel pair when no colour is given)."""
    pastels = [(0.97, 0.8, 0.84), (0.8, 0.9, 0.98), (0.85, 0.95, 0.86), (0.99, 0.9, 0.78),
               (0.89, 0.85, 0.98)]  # fmt: skip
    if color is None:
        i, j = rng.choice(len(pastels), size=2, replace=False)
        first, second = pastels[int(i)], pastels[int(j)]
    else:
        first = color
        second = mix((color[1], color[2], color[0]), WHITE, 0.55)
    rgb = linear_gradient(h, w, first, second, float(rng.uniform(35.0, 70.0)))
    rgb *= _vignette(h, w, 0.08)[..., None]
    light = mix(WHITE, mix(first, second, 0.5), 0.25)
    return Backdrop(_finish(rgb), horizon, light, "colour gradient")


def soft_light(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """A soft radial pool of light on a seamless backdrop, brightest just behind the subject."""
    c = color or [(0.96, 0.9, 0.88), (0.92, 0.92, 0.96), (0.95, 0.93, 0.88)][int(rng.integers(3))]
    pool = _glow(h, w, float(rng.uniform(0.42, 0.58)), 0.55, 0.5, 0.45)
    shade = 0.8 + 0.22 * pool
    return Backdrop(_finish(_paint(shade, c)), horizon, mix(WHITE, c, 0.3), "soft light")


def glossy_black(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """A dark wall over a black gloss floor with a bright sheen band where the floor reflects
    the light at a grazing angle."""
    c = color or (0.16, 0.165, 0.18)
    y, _ = _axes(h, w)
    hz = horizon
    wall = 0.35 + 0.65 * np.clip(y / hz, 0.0, 1.0) ** 1.5
    wall = wall * (1.0 + 0.35 * _glow(h, w, 0.5, hz - 0.1, 0.35, 0.3))
    floor = 0.25 + 0.5 * np.exp(-np.clip(y - hz, 0.0, None) / 0.06)
    t = _smoothstep(hz - 0.004, hz + 0.004, y)
    shade = wall * (1.0 - t) + floor * t
    shade = shade * _vignette(h, w, 0.25)
    del rng  # the backdrop is fully determined by its colour and horizon
    return Backdrop(_finish(_paint(shade, c)), hz, (0.95, 0.96, 1.0), "black gloss surface")


# --- textured surfaces -----------------------------------------------------------------------


def _tabletop(h: int, w: int, hz: float, surface: Rgb, wall: Rgb, front_dark: float = 0.12) -> Rgb:
    hy = _rows(h, hz)
    plane = _on_plane(surface, h, w, hy)
    fall = np.linspace(1.0, 1.0 - front_dark, plane.shape[0], dtype=np.float32)
    plane *= fall[:, None, None]
    return _join_wall_floor(wall, plane, hy)


def _surface_size(h: int, w: int, hz: float) -> tuple[int, int]:
    """Texture size that keeps about one texel per pixel at the near edge of the plane."""
    return max(16, int((1.0 - hz) * h * 1.4)), max(16, int(w / 0.6))


def marble_counter(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """A white (or tinted) marble counter top against a soft, warm wall."""
    base = mix(color, WHITE, 0.6) if color else (0.95, 0.945, 0.935)
    vein = scale(base, 0.55) if color else (0.55, 0.55, 0.57)
    th, tw = _surface_size(h, w, horizon)
    surface = tx.marble(th, tw, rng, base, vein)
    wall = _wall(h, w, rng, (0.9, 0.88, 0.85), window=bool(rng.random() < 0.5))
    rgb = _tabletop(h, w, horizon, surface, wall)
    return Backdrop(_finish(rgb), horizon, (1.0, 0.98, 0.95), "marble counter top")


def wooden_table(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """A plank table top (planks running towards the camera) against a warm wall with window
    light."""
    tones = [((0.72, 0.52, 0.34), (0.42, 0.26, 0.15)), ((0.82, 0.68, 0.5), (0.56, 0.41, 0.27)),
             ((0.5, 0.33, 0.2), (0.26, 0.15, 0.09))]  # fmt: skip
    light_c, dark_c = tones[int(rng.integers(len(tones)))]
    th, tw = _surface_size(h, w, horizon)
    surface = tx.wood(th, tw, rng, light_c, dark_c, planks=7, vertical=True)
    wall_c = color or (0.88, 0.84, 0.78)
    wall = _wall(h, w, rng, wall_c, window=True)
    rgb = _tabletop(h, w, horizon, surface, wall, front_dark=0.18)
    return Backdrop(_finish(rgb), horizon, (1.0, 0.95, 0.86), "wooden table")


def concrete_surface(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """A concrete slab against a concrete wall: cool, industrial, low contrast."""
    tone = mix(color, (0.62, 0.62, 0.6), 0.6) if color else (0.66, 0.66, 0.64)
    th, tw = _surface_size(h, w, horizon)
    surface = tx.concrete(th, tw, rng, scale(tone, 1.08))
    wall = tx.concrete(h, w, rng, tone)
    y, _ = _axes(h, w)
    wall *= (0.85 + 0.15 * y)[..., None]
    rgb = _tabletop(h, w, horizon, surface, wall)
    return Backdrop(_finish(rgb), horizon, (0.97, 0.98, 1.0), "concrete surface")


def _flat_lay(rgb: Rgb, rng: np.random.Generator) -> Rgb:
    """Top-down lighting: a soft off-centre pool of light over a flat material."""
    h, w = rgb.shape[:2]
    pool = _glow(h, w, float(rng.uniform(0.3, 0.7)), float(rng.uniform(0.3, 0.6)), 0.7, 0.7)
    out: Rgb = rgb * (0.9 + 0.14 * pool)[..., None]
    return out


def linen_flat_lay(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """Natural linen seen from above (no horizon: objects lie on it)."""
    tone = (
        color or [(0.9, 0.86, 0.78), (0.86, 0.86, 0.84), (0.84, 0.78, 0.72)][int(rng.integers(3))]
    )
    rgb = _flat_lay(tx.linen(h, w, rng, tone), rng)
    del horizon
    return Backdrop(_finish(rgb), 0.0, (1.0, 0.97, 0.92), "linen flat lay")


def paper_flat_lay(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """Kraft (or tinted) paper seen from above."""
    tone = color or (0.78, 0.62, 0.44)
    rgb = _flat_lay(tx.paper(h, w, rng, tone), rng)
    del horizon
    return Backdrop(_finish(rgb), 0.0, (1.0, 0.96, 0.9), "paper flat lay")


def velvet_display(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """Jewellery-box velvet seen from above under a spot light."""
    tone = (
        color
        or [(0.36, 0.05, 0.11), (0.07, 0.12, 0.3), (0.04, 0.26, 0.18), (0.1, 0.1, 0.11)][
            int(rng.integers(4))
        ]
    )
    rgb = tx.velvet(h, w, rng, tone)
    rgb *= (0.7 + 0.45 * _glow(h, w, 0.5, 0.5, 0.55, 0.55))[..., None]
    del horizon
    return Backdrop(_finish(rgb), 0.0, mix(WHITE, tone, 0.15), "velvet")


# --- environments ----------------------------------------------------------------------------


def _sky(h: int, w: int, zenith: Color, near: Color, y_end: float) -> Rgb:
    y, _ = _axes(h, w)
    t = np.clip(y / max(y_end, 1e-3), 0.0, 1.0) ** 0.75
    z = np.asarray(zenith, dtype=np.float32)
    n = np.asarray(near, dtype=np.float32)
    out: Rgb = z + t[..., None] * (n - z) + np.zeros((1, w, 1), dtype=np.float32)
    return out


def _clouds(h: int, w: int, rng: np.random.Generator, cover: float) -> Gray:
    field = tx.fbm(h, w, rng, cells=3.0, octaves=5, stretch=2.5)
    return _smoothstep(1.0 - cover, 1.0 - cover + 0.25, field)


def sunny_sky(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """Blue sky with a sun glow and a few soft clouds, over a pale stone ledge."""
    zenith = color or (0.3, 0.52, 0.85)
    rgb = _sky(h, w, zenith, (0.84, 0.9, 0.96), horizon)
    sx, sy = float(rng.uniform(0.6, 0.9)), float(rng.uniform(0.05, 0.25))
    sun = _glow(h, w, sx, sy, 0.3, 0.3) * 0.3 + _glow(h, w, sx, sy, 0.035, 0.035) * 0.5
    rgb += sun[..., None] * np.asarray((1.0, 0.96, 0.85), dtype=np.float32)
    cloud = _clouds(h, w, rng, 0.35) * 0.75
    rgb = rgb * (1.0 - cloud[..., None]) + cloud[..., None] * np.float32(0.97)
    hy = _rows(h, horizon)
    th, tw = _surface_size(h, w, horizon)
    ledge = _on_plane(tx.concrete(th, tw, rng, (0.9, 0.87, 0.82)), h, w, hy)
    rgb = _join_wall_floor(rgb, ledge, hy, ao=0.0)
    return Backdrop(_finish(rgb), horizon, (1.0, 0.98, 0.92), "sunny sky")


def sunset_sky(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """Dusk: indigo above, orange and gold near the horizon, a low sun, sand in front."""
    y, _ = _axes(h, w)
    hz = horizon
    top = np.asarray((0.2, 0.2, 0.45), dtype=np.float32)
    mid = np.asarray(color or (0.93, 0.5, 0.36), dtype=np.float32)
    low = np.asarray((1.0, 0.8, 0.45), dtype=np.float32)
    t = np.clip(y / hz, 0.0, 1.0)[..., None]
    upper = top + np.clip(t / 0.6, 0.0, 1.0) * (mid - top)
    rgb = np.where(t < 0.6, upper, mid + np.clip((t - 0.6) / 0.4, 0.0, 1.0) * (low - mid))
    rgb = rgb + np.zeros((1, w, 1), dtype=np.float32)
    sx = float(rng.uniform(0.3, 0.7))
    sun = _glow(h, w, sx, hz - 0.03, 0.3, 0.12) * 0.5 + _glow(h, w, sx, hz - 0.03, 0.03, 0.03)
    rgb += sun[..., None] * np.asarray((1.0, 0.85, 0.6), dtype=np.float32)
    streaks = _clouds(h, w, rng, 0.3) * np.clip(1.0 - y / hz, 0.0, 1.0) * 0.5
    rgb = rgb * (1.0 - streaks[..., None]) + streaks[..., None] * np.asarray(
        (0.55, 0.3, 0.4), dtype=np.float32
    )
    hy = _rows(h, hz)
    th, tw = _surface_size(h, w, hz)
    sand = tx.concrete(th, tw, rng, (0.78, 0.56, 0.42))
    ground = _on_plane(sand, h, w, hy) * np.float32(0.85)
    rgb = _join_wall_floor(rgb.astype(np.float32), ground, hy, ao=0.0)
    return Backdrop(_finish(rgb), hz, (1.0, 0.8, 0.6), "sunset sky")


def beach(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """Sky, a band of sea with foam at the shore, and sand in front (the floor)."""
    hz = horizon
    sea_top = max(0.1, hz - 0.14)
    rgb = _sky(h, w, (0.42, 0.65, 0.9), (0.86, 0.92, 0.96), sea_top)
    cloud = _clouds(h, w, rng, 0.25) * 0.6
    rgb = rgb * (1.0 - cloud[..., None]) + cloud[..., None] * np.float32(0.98)
    y, _ = _axes(h, w)
    y0, y1 = _rows(h, sea_top), _rows(h, hz)
    if y1 > y0:
        depth = np.clip((y[y0:y1] - sea_top) / (hz - sea_top), 0.0, 1.0)[..., None]
        deep = np.asarray(color or (0.1, 0.4, 0.62), dtype=np.float32)
        shallow = np.asarray((0.3, 0.72, 0.74), dtype=np.float32)
        waves = tx.fbm(y1 - y0, w, rng, cells=30.0, octaves=3, stretch=10.0)[..., None]
        sea = (deep + depth * (shallow - deep)) * (0.9 + 0.2 * waves)
        foam = np.clip((depth - 0.85) / 0.15, 0.0, 1.0) * np.clip(waves * 1.6, 0.0, 1.0)
        rgb[y0:y1] = sea * (1.0 - foam) + foam * np.float32(0.95)
    th, tw = _surface_size(h, w, hz)
    sand_tex = tx.concrete(th, tw, rng, (0.93, 0.84, 0.68))
    ripples = tx.fbm(th, tw, rng, cells=16.0, octaves=2, stretch=4.0)
    sand_tex *= (0.95 + 0.08 * ripples)[..., None]
    sand = _on_plane(sand_tex, h, w, y1)
    wet = np.exp(-np.arange(sand.shape[0], dtype=np.float32) / max(1.0, 0.03 * h))
    sand *= (1.0 - 0.25 * wet)[:, None, None]
    rgb = _join_wall_floor(rgb, sand, y1, ao=0.0)
    return Backdrop(_finish(rgb), hz, (1.0, 0.97, 0.9), "beach")


def city_bokeh(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """Night city lights out of focus above a dark gloss surface that mirrors them dimly."""
    hy = _rows(h, horizon)
    rgb = _sky(h, w, (0.03, 0.035, 0.08), (0.1, 0.08, 0.15), horizon)
    lights = [(1.0, 0.72, 0.35), (1.0, 0.45, 0.65), (0.4, 0.75, 1.0), (1.0, 0.95, 0.85)]
    if color is not None:
        lights = [color, color, mix(color, WHITE, 0.5), (1.0, 0.95, 0.85)]
    bokeh = _bokeh(h, w, rng, lights, count=70, size=0.05)
    rgb += bokeh
    if 0 < hy < h:
        rows = h - hy
        mirrored = rgb[max(0, hy - rows) : hy][::-1]
        floor = np.zeros((rows, w, 3), dtype=np.float32) + np.float32(0.03)
        n = mirrored.shape[0]
        fade = np.linspace(0.35, 0.05, rows, dtype=np.float32)[:n, None, None]
        floor[:n] += cv2.GaussianBlur(mirrored, (0, 0), max(1.0, h / 200.0)) * fade
        rgb = _join_wall_floor(rgb, floor, hy, ao=0.0)
    return Backdrop(_finish(rgb), horizon, (0.95, 0.9, 1.0), "city lights bokeh")


def garden_bokeh(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """Out-of-focus foliage (mottled greens with sun sparkles) behind a wooden table top."""
    foliage = tx.fbm(h, w, rng, cells=5.0, octaves=3, persistence=0.45)
    dark = scale(color, 0.45) if color else (0.12, 0.26, 0.1)
    bright = color or (0.48, 0.66, 0.28)
    rgb = tx.colorize(foliage, dark, bright)
    rgb += _bokeh(h, w, rng, [(1.0, 0.98, 0.8), (0.85, 1.0, 0.6)], count=45, size=0.035)
    th, tw = _surface_size(h, w, horizon)
    surface = tx.wood(th, tw, rng, (0.74, 0.58, 0.4), (0.46, 0.32, 0.2), planks=6, vertical=True)
    rgb = _tabletop(h, w, horizon, surface, rgb, front_dark=0.15)
    return Backdrop(_finish(rgb), horizon, (1.0, 0.98, 0.88), "garden bokeh")


def _room(
    h: int,
    w: int,
    rng: np.random.Generator,
    horizon: float,
    wall: Rgb,
    baseboard: bool,
    floor_tones: tuple[Color, Color],
) -> Rgb:
    hy = _rows(h, horizon)
    if baseboard:
        bh = max(2, int(0.035 * h))
        y0 = max(0, hy - bh)
        wall[y0:hy] = np.float32(0.9)
        wall[y0 : min(hy, y0 + max(1, bh // 8))] = np.float32(0.97)
    th, tw = _surface_size(h, w, horizon)
    boards = tx.wood(th, tw, rng, floor_tones[0], floor_tones[1], planks=14, vertical=True)
    return _tabletop(h, w, horizon, boards, wall, front_dark=0.2)


def living_room(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """A painted wall with window light, a skirting board and a wooden floor: the simplest room
    that reads as an interior, for furniture and home goods."""
    walls = [(0.9, 0.87, 0.82), (0.72, 0.77, 0.7), (0.7, 0.76, 0.82), (0.86, 0.8, 0.74)]
    c = color or walls[int(rng.integers(len(walls)))]
    wall = _wall(h, w, rng, c, window=True)
    rgb = _room(h, w, rng, horizon, wall, True, ((0.74, 0.57, 0.4), (0.5, 0.35, 0.22)))
    return Backdrop(_finish(rgb), horizon, (1.0, 0.96, 0.88), "living room")


def loft_room(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """A concrete wall over dark oak boards: an industrial interior."""
    tone = mix(color, (0.62, 0.62, 0.6), 0.6) if color else (0.62, 0.62, 0.6)
    wall = tx.concrete(h, w, rng, tone)
    wall += (0.12 * _window_light(h, w, rng))[..., None]
    rgb = _room(h, w, rng, horizon, wall, False, ((0.46, 0.33, 0.23), (0.24, 0.16, 0.11)))
    return Backdrop(_finish(rgb), horizon, (0.98, 0.97, 0.95), "loft interior")


def shelf(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """A light-wood floating shelf on a plaster wall lit by a window: a thin foreshortened top
    (the floor, from ``horizon``), a darker front edge, and the wall in shade below it."""
    c = color or (0.92, 0.9, 0.86)
    rgb = _wall(h, w, rng, c, window=True)
    hy = _rows(h, horizon)
    top_h = max(3, int(0.1 * h))
    edge_h = max(2, int(0.035 * h))
    th, tw = max(16, top_h * 3), max(16, int(w / 0.6))
    board = tx.wood(th, tw, rng, (0.86, 0.72, 0.54), (0.66, 0.5, 0.34), planks=1, vertical=False)
    top = _on_plane(board, hy + top_h, w, hy, spread=0.42)
    rgb = _join_wall_floor(rgb, np.zeros_like(rgb[hy:]), hy)
    rgb[hy : hy + top_h] = top
    e0, e1 = hy + top_h, min(h, hy + top_h + edge_h)
    rgb[e0:e1] = top[-1:] * np.float32(0.72)
    if e1 < h:
        below = _wall(h - e1, w, rng, c, window=False) * np.float32(0.8)
        shade = 1.0 - 0.45 * np.exp(-np.arange(h - e1, dtype=np.float32) / max(1.0, 0.05 * h))
        rgb[e1:] = below * shade[:, None, None]
    return Backdrop(_finish(rgb), horizon, (1.0, 0.96, 0.9), "shelf with window light")


def kitchen_counter(
    h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
) -> Backdrop:
    """White subway tiles over a marble counter top."""
    tile = color or (0.94, 0.94, 0.92)
    wall = tx.subway_tiles(h, w, rng, tile, (0.78, 0.78, 0.76))
    wall *= (0.86 + 0.14 * _glow(h, w, 0.5, horizon, 0.6, 0.6))[..., None]
    th, tw = _surface_size(h, w, horizon)
    surface = tx.marble(th, tw, rng, (0.93, 0.93, 0.92), (0.5, 0.5, 0.52))
    rgb = _tabletop(h, w, horizon, surface, wall)
    return Backdrop(_finish(rgb), horizon, (1.0, 0.98, 0.95), "kitchen counter")
