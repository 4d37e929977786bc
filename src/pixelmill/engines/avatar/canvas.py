"""Anti-aliased vector drawing for the illustrated avatars.

Every shape is a polygon in output-pixel coordinates (floats). A :class:`Canvas` rasterises it
with OpenCV's ``LINE_AA`` at ``ss`` times the output resolution (sub-pixel vertex precision
through ``fillPoly``'s ``shift``) and keeps the result as a soft coverage mask (:class:`Shape`)
over the shape's bounding box only, so the cost of a shape grows with its size, not with the
canvas. The finished canvas is area-downscaled to the output size, which leaves smooth edges.

The geometry helpers build the polygons the illustration is made of: ellipses, tapered capsules
(limbs), Catmull-Rom outlines through control points (torso, face, hair) and tapered strokes
along a curve (eyebrows, the smile, strands of hair).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.runtime.palette import Color

Points = npt.NDArray[np.float64]
"""An ``(N, 2)`` array of ``(x, y)`` vertices in output pixels."""

Gray = npt.NDArray[np.float32]
Rgb = npt.NDArray[np.float32]

_SHIFT = 4
"""``fillPoly`` fractional bits: vertices are placed to 1/16 of a supersampled pixel."""


@dataclass(frozen=True)
class Shape:
    """A soft coverage mask (float32, 0..1) over the supersampled canvas region whose top-left
    corner is ``(x0, y0)``."""

    alpha: Gray
    x0: int
    y0: int

    @property
    def x1(self) -> int:
        return self.x0 + int(self.alpha.shape[1])

    @property
    def y1(self) -> int:
        return self.y0 + int(self.alpha.shape[0])

    @property
    def empty(self) -> bool:
        return self.alpha.size == 0

    def on(self, x0: int, y0: int, h: int, w: int) -> Gray:
        """This shape's coverage over the region ``(x0, y0, h, w)`` (zeros where it has none)."""
        out = np.zeros((h, w), dtype=np.float32)
        ax0, ay0 = max(x0, self.x0), max(y0, self.y0)
        ax1, ay1 = min(x0 + w, self.x1), min(y0 + h, self.y1)
        if ax0 < ax1 and ay0 < ay1:
            out[ay0 - y0 : ay1 - y0, ax0 - x0 : ax1 - x0] = self.alpha[
                ay0 - self.y0 : ay1 - self.y0, ax0 - self.x0 : ax1 - self.x0
            ]
        return out

    def moved(self, dx: int, dy: int) -> Shape:
        """The same coverage shifted by ``(dx, dy)`` supersampled pixels."""
        return Shape(self.alpha, self.x0 + dx, self.y0 + dy)

    def minus(self, other: Shape) -> Shape:
        """The part of this shape that ``other`` does not cover."""
        cover = other.on(self.x0, self.y0, *self.alpha.shape)
        return Shape(self.alpha * (1.0 - cover), self.x0, self.y0)

    def within(self, other: Shape) -> Shape:
        """The part of this shape inside ``other`` (coverage multiplied)."""
        cover = other.on(self.x0, self.y0, *self.alpha.shape)
        return Shape(self.alpha * cover, self.x0, self.y0)

    def union(self, other: Shape) -> Shape:
        """Both shapes (per-pixel maximum) over the box that holds both."""
        if other.empty:
            return self
        if self.empty:
            return other
        x0, y0 = min(self.x0, other.x0), min(self.y0, other.y0)
        h, w = max(self.y1, other.y1) - y0, max(self.x1, other.x1) - x0
        return Shape(np.maximum(self.on(x0, y0, h, w), other.on(x0, y0, h, w)), x0, y0)


EMPTY = Shape(np.zeros((0, 0), dtype=np.float32), 0, 0)


class Canvas:
    """A float32 RGB drawing surface at ``ss`` times the output size."""

    def __init__(self, background: Rgb, ss: int) -> None:
        h, w = background.shape[:2]
        self.h, self.w, self.ss = h, w, ss
        big = cv2.resize(background, (w * ss, h * ss), interpolation=cv2.INTER_LINEAR)
        self.rgb: Rgb = np.ascontiguousarray(big, dtype=np.float32)

    def shape(self, *polygons: Points) -> Shape:
        """The union of ``polygons`` (output-pixel vertices) as an anti-aliased coverage mask."""
        polys = [np.asarray(p, dtype=np.float64) * self.ss for p in polygons if len(p) >= 3]
        if not polys:
            return EMPTY
        allp = np.concatenate(polys)
        x0 = max(0, math.floor(float(allp[:, 0].min())) - 2)
        y0 = max(0, math.floor(float(allp[:, 1].min())) - 2)
        x1 = min(self.w * self.ss, math.ceil(float(allp[:, 0].max())) + 3)
        y1 = min(self.h * self.ss, math.ceil(float(allp[:, 1].max())) + 3)
        if x1 <= x0 or y1 <= y0:
            return EMPTY
        mask = np.zeros((y1 - y0, x1 - x0), dtype=np.uint8)
        offset = np.array([x0, y0], dtype=np.float64)
        for p in polys:
            # One call per polygon: overlapping polygons then always add up to their union.
            pts = np.round((p - offset) * (1 << _SHIFT)).astype(np.int32)
            cv2.fillPoly(mask, [pts], 255, lineType=cv2.LINE_AA, shift=_SHIFT)
        return Shape(mask.astype(np.float32) * np.float32(1.0 / 255.0), x0, y0)

    def soft(self, shape: Shape, sigma: float) -> Shape:
        """``shape`` blurred by a Gaussian of ``sigma`` output pixels (soft shadows, glows)."""
        if shape.empty:
            return shape
        s = sigma * self.ss
        pad = math.ceil(3 * s) + 1
        padded = cv2.copyMakeBorder(shape.alpha, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
        blurred = cv2.GaussianBlur(padded, (0, 0), s)
        return Shape(np.asarray(blurred, dtype=np.float32), shape.x0 - pad, shape.y0 - pad)

    def px(self, distance: float) -> int:
        """A distance in output pixels as whole supersampled pixels (at least 1)."""
        return max(1, round(distance * self.ss))

    def fill(self, shape: Shape, color: Color, opacity: float = 1.0) -> None:
        """Paint ``color`` over ``shape``'s coverage."""
        if shape.empty or opacity <= 0:
            return
        region, a = self._region(shape)
        if region is None:
            return
        a = a * np.float32(opacity)
        c = np.asarray(color, dtype=np.float32)
        region += a[..., None] * (c - region)

    def darken(self, shape: Shape, amount: float) -> None:
        """Multiply the canvas by ``1 - amount`` under ``shape`` (shadows over any colour)."""
        if shape.empty or amount <= 0:
            return
        region, a = self._region(shape)
        if region is None:
            return
        region *= (1.0 - np.float32(amount) * a)[..., None]

    def _region(self, shape: Shape) -> tuple[Rgb | None, Gray]:
        x0, y0 = max(0, shape.x0), max(0, shape.y0)
        x1, y1 = min(self.w * self.ss, shape.x1), min(self.h * self.ss, shape.y1)
        if x1 <= x0 or y1 <= y0:
            return None, shape.alpha
        a = shape.alpha[y0 - shape.y0 : y1 - shape.y0, x0 - shape.x0 : x1 - shape.x0]
        return self.rgb[y0:y1, x0:x1], a

    def result(self) -> Rgb:
        """The canvas at the output size (area filter: the anti-aliasing step)."""
        if self.ss == 1:
            return self.rgb
        small = cv2.resize(self.rgb, (self.w, self.h), interpolation=cv2.INTER_AREA)
        return np.asarray(small, dtype=np.float32)


# --- geometry ----------------------------------------------------------------------------------


def pts(*xy: tuple[float, float]) -> Points:
    """Vertices from ``(x, y)`` pairs."""
    return np.asarray(xy, dtype=np.float64)


def ellipse(cx: float, cy: float, rx: float, ry: float, angle: float = 0.0, n: int = 72) -> Points:
    """An ellipse centred at ``(cx, cy)`` with radii ``rx``, ``ry``, rotated by ``angle``
    radians."""
    t = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
    x, y = rx * np.cos(t), ry * np.sin(t)
    ca, sa = math.cos(angle), math.sin(angle)
    return np.stack([cx + x * ca - y * sa, cy + x * sa + y * ca], axis=1)


def arc(
    cx: float, cy: float, rx: float, ry: float, start: float, end: float, n: int = 24
) -> Points:
    """Points on an ellipse from angle ``start`` to ``end`` (radians, y down)."""
    t = np.linspace(start, end, n)
    return np.stack([cx + rx * np.cos(t), cy + ry * np.sin(t)], axis=1)


def capsule(
    p0: tuple[float, float], p1: tuple[float, float], r0: float, r1: float, n: int = 20
) -> Points:
    """A tapered capsule: the hull of a circle of radius ``r0`` at ``p0`` and one of ``r1`` at
    ``p1`` (a limb segment)."""
    dx, dy = p1[0] - p0[0], p1[1] - p0[1]
    length = math.hypot(dx, dy)
    if length <= abs(r0 - r1) + 1e-6:
        big = (p0, r0) if r0 >= r1 else (p1, r1)
        return ellipse(big[0][0], big[0][1], big[1], big[1], n=2 * n)
    theta = math.atan2(dy, dx)
    beta = math.acos((r0 - r1) / length)
    far = arc(p1[0], p1[1], r1, r1, theta - beta, theta + beta, n)
    near = arc(p0[0], p0[1], r0, r0, theta + beta, theta + 2 * math.pi - beta, n)
    return np.concatenate([far, near])


def catmull_rom(control: Sequence[tuple[float, float]], closed: bool, per: int = 10) -> Points:
    """A smooth curve through ``control`` points (centripetal-free uniform Catmull-Rom),
    ``per`` samples per segment; ``closed`` joins the last point back to the first."""
    p = np.asarray(control, dtype=np.float64)
    n = len(p)
    if n < 3:
        return p
    if closed:
        ext = np.concatenate([p[-1:], p, p[:2]])
        segments = n
    else:
        ext = np.concatenate([2 * p[:1] - p[1:2], p, 2 * p[-1:] - p[-2:-1]])
        segments = n - 1
    t = np.linspace(0.0, 1.0, per, endpoint=False)[:, None]
    t2, t3 = t * t, t * t * t
    out = []
    for i in range(segments):
        a, b, c, d = ext[i], ext[i + 1], ext[i + 2], ext[i + 3]
        out.append(
            0.5
            * (
                2 * b
                + (-a + c) * t
                + (2 * a - 5 * b + 4 * c - d) * t2
                + (-a + 3 * b - 3 * c + d) * t3
            )
        )
    if not closed:
        out.append(p[-1:])
    return np.concatenate(out)


def bezier(*control: tuple[float, float], n: int = 24) -> Points:
    """A Bézier curve of any degree through its control points (de Casteljau)."""
    p = np.asarray(control, dtype=np.float64)
    t = np.linspace(0.0, 1.0, n)[:, None, None]
    work = np.broadcast_to(p, (n, *p.shape)).copy()
    while work.shape[1] > 1:
        work = (1 - t) * work[:, :-1] + t * work[:, 1:]
    return work[:, 0]


def stroke(path: Points, w0: float, w1: float | None = None, taper: bool = True) -> Points:
    """A filled outline around the open ``path``: width ``w0`` at the start and ``w1`` at the
    end, pinched to a point at both ends when ``taper`` (a brush stroke)."""
    w1 = w0 if w1 is None else w1
    n = len(path)
    d = np.gradient(path, axis=0)
    norm = np.hypot(d[:, 0], d[:, 1])[:, None]
    normal = np.stack([-d[:, 1], d[:, 0]], axis=1) / np.maximum(norm, 1e-9)
    t = np.linspace(0.0, 1.0, n)
    half = 0.5 * (w0 + (w1 - w0) * t)
    if taper:
        half = half * np.sqrt(np.clip(np.sin(np.pi * t), 0.0, 1.0)) ** 0.6
    left = path + normal * half[:, None]
    right = path - normal * half[:, None]
    return np.concatenate([left, right[::-1]])


def rounded_rect(x0: float, y0: float, x1: float, y1: float, r: float, n: int = 8) -> Points:
    """A rectangle with corners rounded to radius ``r``."""
    r = min(r, (x1 - x0) / 2, (y1 - y0) / 2)
    q = math.pi / 2
    return np.concatenate(
        [
            arc(x1 - r, y0 + r, r, r, -q, 0, n),
            arc(x1 - r, y1 - r, r, r, 0, q, n),
            arc(x0 + r, y1 - r, r, r, q, 2 * q, n),
            arc(x0 + r, y0 + r, r, r, 2 * q, 3 * q, n),
        ]
    )


def wobble(points: Points, center: tuple[float, float], amount: float, lobes: int) -> Points:
    """Push a closed outline in and out radially around ``center`` (``lobes`` bumps of
    ``amount`` pixels): the cloud outline of curly hair."""
    c = np.asarray(center, dtype=np.float64)
    v = points - c
    ang = np.arctan2(v[:, 1], v[:, 0])
    r = np.hypot(v[:, 0], v[:, 1])
    bump = amount * np.abs(np.sin(ang * lobes / 2.0)) ** 0.7
    scale_r = (r + bump) / np.maximum(r, 1e-9)
    return c + v * scale_r[:, None]


def shade(c: Color, k: float) -> Color:
    """``c`` darker (``k`` < 1) or lighter towards white (``k`` > 1)."""
    if k <= 1.0:
        return (c[0] * k, c[1] * k, c[2] * k)
    t = min(1.0, k - 1.0)
    return (c[0] + (1 - c[0]) * t, c[1] + (1 - c[1]) * t, c[2] + (1 - c[2]) * t)
