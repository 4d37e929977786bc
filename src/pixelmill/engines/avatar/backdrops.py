"""Flat-illustration backdrops for the guided avatars: a studio gradient with a halo, or a
simple scene (park, city, beach, office, sunset, night) drawn from the same flat shapes as the
figure, so the person and the place look like one illustration.

Each painter takes the canvas (already filled with the backdrop's base gradient), the colour the
look asks for, the floor line (fraction of the height where the figure stands) and a seeded
generator; it draws with anti-aliased shapes and returns nothing.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pixelmill.engines.avatar.canvas import (
    Canvas,
    Points,
    catmull_rom,
    ellipse,
    pts,
    rounded_rect,
    shade,
)
from pixelmill.engines.avatar.canvas import Rgb as CanvasRgb
from pixelmill.engines.runtime.backdrops import linear_gradient
from pixelmill.engines.runtime.palette import Color, mix

_WHITE: Color = (1.0, 1.0, 1.0)


def base_gradient(name: str, h: int, w: int, color: Color) -> CanvasRgb:
    """The backdrop's background gradient before any shapes (top to bottom)."""
    top, bottom = {
        "studio": (mix(color, _WHITE, 0.55), mix(color, _WHITE, 0.1)),
        "park": ((0.62, 0.82, 0.96), (0.86, 0.94, 0.98)),
        "city": ((0.98, 0.86, 0.76), (0.8, 0.88, 0.96)),
        "beach": ((0.5, 0.76, 0.95), (0.88, 0.95, 0.99)),
        "office": (mix(color, _WHITE, 0.55), mix(color, _WHITE, 0.35)),
        "sunset": ((0.44, 0.3, 0.58), (0.99, 0.62, 0.42)),
        "night": ((0.06, 0.08, 0.2), (0.2, 0.2, 0.42)),
    }[name]
    return np.asarray(linear_gradient(h, w, top, bottom, 90.0), dtype=np.float32)


Painter = Callable[[Canvas, Color, float, np.random.Generator], None]


def _wave_band(
    canvas: Canvas, y: float, amp: float, rng: np.random.Generator, color: Color, bumps: int = 4
) -> None:
    """Fill from a smooth wavy line at height ``y`` (pixels) down to the bottom."""
    h, w = canvas.h, canvas.w
    xs = np.linspace(-0.1 * w, 1.1 * w, bumps + 2)
    ys = y + amp * rng.uniform(-1.0, 1.0, len(xs))
    line = catmull_rom(list(zip(xs.tolist(), ys.tolist(), strict=True)), closed=False, per=16)
    poly = np.concatenate([line, pts((1.1 * w, h + 2.0), (-0.1 * w, h + 2.0))])
    canvas.fill(canvas.shape(poly), color)


def _cloud(cx: float, cy: float, r: float) -> list[Points]:
    return [
        ellipse(cx, cy, r, r * 0.8),
        ellipse(cx - r * 0.9, cy + r * 0.25, r * 0.7, r * 0.55),
        ellipse(cx + r * 0.95, cy + r * 0.2, r * 0.75, r * 0.55),
        ellipse(cx, cy + r * 0.35, r * 1.6, r * 0.45),
    ]


def studio(canvas: Canvas, color: Color, floor: float, rng: np.random.Generator) -> None:
    """A soft halo disc behind the figure and a floor ellipse: the classic avatar backdrop."""
    h, w = canvas.h, canvas.w
    halo = canvas.shape(ellipse(w * 0.5, h * 0.4, w * 0.42, w * 0.42))
    canvas.fill(halo, mix(color, _WHITE, 0.6), 0.7)
    canvas.fill(
        canvas.shape(ellipse(w * 0.5, h * floor, w * 0.42, h * 0.045)), shade(color, 0.9), 0.6
    )
    for _ in range(int(rng.integers(3, 6))):
        x, y = rng.uniform(0.05, 0.95) * w, rng.uniform(0.06, 0.6) * h
        r = rng.uniform(0.008, 0.02) * w
        canvas.fill(canvas.shape(ellipse(x, y, r, r)), mix(color, _WHITE, 0.7), 0.8)


def park(canvas: Canvas, color: Color, floor: float, rng: np.random.Generator) -> None:
    h, w = canvas.h, canvas.w
    for _ in range(2):
        canvas.fill(
            canvas.shape(
                *_cloud(
                    rng.uniform(0.1, 0.9) * w,
                    rng.uniform(0.08, 0.25) * h,
                    rng.uniform(0.05, 0.08) * w,
                )
            ),
            _WHITE,
            0.9,
        )
    _wave_band(canvas, h * 0.55, h * 0.04, rng, (0.66, 0.82, 0.58))
    for side in (-1, 1):
        x = w * (0.5 + side * rng.uniform(0.3, 0.4))
        top = h * rng.uniform(0.3, 0.4)
        trunk = rounded_rect(x - w * 0.018, top + w * 0.1, x + w * 0.018, h * 0.68, w * 0.01)
        canvas.fill(canvas.shape(trunk), (0.48, 0.34, 0.24))
        canopy = [
            ellipse(x, top, w * 0.13, w * 0.14),
            ellipse(x - w * 0.08, top + w * 0.07, w * 0.09, w * 0.09),
            ellipse(x + w * 0.08, top + w * 0.06, w * 0.1, w * 0.09),
        ]
        leaves = canvas.shape(*canopy)
        canvas.fill(leaves, (0.3, 0.6, 0.36))
        canvas.fill(
            leaves.minus(leaves.moved(-canvas.px(w * 0.02), -canvas.px(w * 0.02))), (0.24, 0.5, 0.3)
        )
    _wave_band(canvas, h * 0.7, h * 0.02, rng, (0.5, 0.72, 0.42))
    path = np.concatenate(
        [pts((w * 0.42, h * 0.7), (w * 0.58, h * 0.7)), pts((w * 0.8, h + 2.0), (w * 0.2, h + 2.0))]
    )
    canvas.fill(canvas.shape(path), (0.9, 0.84, 0.7))
    del color, floor


def city(canvas: Canvas, color: Color, floor: float, rng: np.random.Generator) -> None:
    h, w = canvas.h, canvas.w
    ground = h * 0.74
    for layer, (tone, lo, hi) in enumerate(
        (((0.78, 0.76, 0.86), 0.25, 0.5), ((0.62, 0.62, 0.74), 0.35, 0.6))
    ):
        x = -rng.uniform(0.0, 0.1) * w
        while x < w:
            bw = rng.uniform(0.1, 0.2) * w
            top = h * rng.uniform(lo, hi)
            building = canvas.shape(pts((x, top), (x + bw, top), (x + bw, ground), (x, ground)))
            canvas.fill(building, tone)
            win = mix(tone, _WHITE, 0.45) if layer else mix(tone, _WHITE, 0.3)
            step = w * 0.035
            for wy in np.arange(top + step * 0.8, ground - step, step):
                for wx in np.arange(x + step * 0.6, x + bw - step * 0.6, step):
                    canvas.fill(
                        canvas.shape(rounded_rect(wx, wy, wx + step * 0.45, wy + step * 0.55, 1.0)),
                        win,
                    )
            x += bw + rng.uniform(0.0, 0.03) * w
    canvas.fill(
        canvas.shape(pts((0, ground), (w, ground), (w, h + 1.0), (0, h + 1.0))), (0.8, 0.79, 0.8)
    )
    canvas.fill(
        canvas.shape(
            pts((0, ground), (w, ground), (w, ground + h * 0.015), (0, ground + h * 0.015))
        ),
        (0.66, 0.65, 0.68),
    )
    del color, floor


def beach(canvas: Canvas, color: Color, floor: float, rng: np.random.Generator) -> None:
    h, w = canvas.h, canvas.w
    sx = w * rng.choice([0.2, 0.8])
    canvas.fill(canvas.shape(ellipse(sx, h * 0.2, w * 0.09, w * 0.09)), (1.0, 0.9, 0.55))
    canvas.fill(canvas.shape(*_cloud(w - sx, h * 0.14, w * 0.06)), _WHITE, 0.9)
    horizon = h * 0.52
    canvas.fill(
        canvas.shape(pts((0, horizon), (w, horizon), (w, h + 1.0), (0, h + 1.0))), (0.3, 0.62, 0.84)
    )
    for i in range(4):
        y = horizon + (i + 1) * h * 0.035
        x = rng.uniform(0.1, 0.8) * w
        canvas.fill(
            canvas.shape(rounded_rect(x, y, x + w * 0.12, y + h * 0.005, 2.0)),
            (0.62, 0.82, 0.94),
            0.8,
        )
    _wave_band(canvas, h * 0.68, h * 0.015, rng, (0.96, 0.9, 0.74))
    _wave_band(canvas, h * 0.8, h * 0.01, rng, (0.93, 0.85, 0.66))
    del color, floor


def office(canvas: Canvas, color: Color, floor: float, rng: np.random.Generator) -> None:
    h, w = canvas.h, canvas.w
    ground = h * 0.76
    side = rng.choice([-1, 1])
    wx = w * (0.5 + side * 0.3)
    frame = rounded_rect(wx - w * 0.17, h * 0.12, wx + w * 0.17, h * 0.52, w * 0.01)
    canvas.fill(canvas.shape(frame), _WHITE)
    glass = rounded_rect(wx - w * 0.15, h * 0.135, wx + w * 0.15, h * 0.505, w * 0.005)
    canvas.fill(canvas.shape(glass), (0.74, 0.88, 0.97))
    canvas.fill(
        canvas.shape(rounded_rect(wx - w * 0.006, h * 0.135, wx + w * 0.006, h * 0.505, 1.0)),
        _WHITE,
    )
    canvas.fill(
        canvas.shape(rounded_rect(wx - w * 0.15, h * 0.31, wx + w * 0.15, h * 0.322, 1.0)), _WHITE
    )
    px = w * (0.5 - side * 0.36)
    pot = pts(
        (px - w * 0.06, ground - h * 0.1),
        (px + w * 0.06, ground - h * 0.1),
        (px + w * 0.045, ground),
        (px - w * 0.045, ground),
    )
    for k in range(7):
        angle = -np.pi / 2 + (k - 3) * 0.32
        tip = (px + np.cos(angle) * w * 0.16, ground - h * 0.1 + np.sin(angle) * h * 0.17)
        leaf = ellipse(
            (px + tip[0]) / 2, (ground - h * 0.1 + tip[1]) / 2, w * 0.09, w * 0.03, float(angle)
        )
        canvas.fill(canvas.shape(leaf), (0.28, 0.56, 0.36) if k % 2 else (0.36, 0.66, 0.42))
    canvas.fill(canvas.shape(pot), (0.86, 0.55, 0.4))
    canvas.fill(
        canvas.shape(pts((0, ground), (w, ground), (w, h + 1.0), (0, h + 1.0))),
        mix(shade(color, 0.75), (0.7, 0.55, 0.42), 0.5),
    )
    canvas.fill(
        canvas.shape(
            pts((0, ground - h * 0.012), (w, ground - h * 0.012), (w, ground), (0, ground))
        ),
        _WHITE,
    )
    del floor


def sunset(canvas: Canvas, color: Color, floor: float, rng: np.random.Generator) -> None:
    h, w = canvas.h, canvas.w
    canvas.fill(
        canvas.shape(ellipse(w * rng.uniform(0.3, 0.7), h * 0.6, w * 0.2, w * 0.2)),
        (1.0, 0.84, 0.56),
    )
    _wave_band(canvas, h * 0.6, h * 0.04, rng, (0.56, 0.34, 0.5))
    _wave_band(canvas, h * 0.7, h * 0.03, rng, (0.4, 0.24, 0.42))
    del color, floor


def night(canvas: Canvas, color: Color, floor: float, rng: np.random.Generator) -> None:
    h, w = canvas.h, canvas.w
    for _ in range(40):
        x, y = rng.uniform(0, w), rng.uniform(0, h * 0.6)
        r = rng.uniform(0.5, 1.6) * h / 1000.0 * 2
        canvas.fill(
            canvas.shape(ellipse(x, y, r, r, n=12)), (1.0, 0.97, 0.85), float(rng.uniform(0.5, 1.0))
        )
    mx, my, mr = w * rng.choice([0.2, 0.8]), h * 0.16, w * 0.07
    moon = canvas.shape(ellipse(mx, my, mr, mr))
    canvas.fill(
        moon.minus(canvas.shape(ellipse(mx + mr * 0.45, my - mr * 0.2, mr * 0.85, mr * 0.85))),
        (1.0, 0.95, 0.78),
    )
    _wave_band(canvas, h * 0.66, h * 0.03, rng, (0.14, 0.16, 0.32))
    _wave_band(canvas, h * 0.76, h * 0.015, rng, (0.1, 0.11, 0.24))
    del color, floor


PAINTERS: dict[str, Painter] = {
    "studio": studio,
    "park": park,
    "city": city,
    "beach": beach,
    "office": office,
    "sunset": sunset,
    "night": night,
}
