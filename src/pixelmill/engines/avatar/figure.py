"""Drawing one illustrated person: flat colour shapes with simple shading, in the style of
vector "people" illustrations.

Each body part or garment is one anti-aliased shape (:mod:`~pixelmill.engines.avatar.canvas`)
filled with a flat colour, then shaded the same way throughout: a darker rim on the side away
from the light (the light comes from the upper left) and a soft cast shadow on the parts already
drawn beneath it, which is what separates an arm from a torso of the same colour. There are no
outlines.

Drawing order, back to front: hair behind the head, legs and shoes, the lower garment, the neck,
the upper garment, the arms, the head and face, hair in front, headwear.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from pixelmill.engines.avatar.attributes import Look
from pixelmill.engines.avatar.canvas import (
    EMPTY,
    Canvas,
    Points,
    Shape,
    arc,
    bezier,
    capsule,
    catmull_rom,
    ellipse,
    rounded_rect,
    shade,
    stroke,
    wobble,
)
from pixelmill.engines.avatar.skeleton import SIDES, Arm, Body
from pixelmill.engines.runtime.palette import Color, luminance, mix

UPoint = tuple[float, float]

_LIP = (0.55, 0.2, 0.22)
_MOUTH = (0.38, 0.12, 0.13)
_EYE = (0.13, 0.1, 0.1)
_WHITE = (1.0, 1.0, 1.0)
_SOLE_LIGHT = (0.93, 0.93, 0.92)


class Artist:
    """Draws one figure onto a canvas; keeps the union of what it drew (the figure's mask)."""

    def __init__(self, canvas: Canvas, body: Body, look: Look) -> None:
        self.c = canvas
        self.b = body
        self.look = look
        self.figure: Shape = EMPTY
        self.pr = body.pr
        self.skin = look.skin
        self.rim = canvas.px(body.s(0.06))

    # --- primitives -------------------------------------------------------------------------

    def to_px(self, points: Sequence[UPoint] | Points) -> Points:
        """Unit-space points in canvas pixels."""
        arr = np.asarray(points, dtype=np.float64)
        return np.stack([self.b.ox + arr[:, 0] * self.b.u, self.b.oy + arr[:, 1] * self.b.u], 1)

    def smooth(self, control: Sequence[UPoint], closed: bool = True) -> Points:
        return self.to_px(catmull_rom(control, closed, per=12))

    def ell(self, cx: float, cy: float, rx: float, ry: float, angle: float = 0.0) -> Points:
        return self.to_px(ellipse(cx, cy, rx, ry, angle))

    def cap(self, p0: UPoint, p1: UPoint, r0: float, r1: float) -> Points:
        return self.to_px(capsule(p0, p1, r0, r1))

    def shape(self, *polys: Points) -> Shape:
        return self.c.shape(*polys)

    def cut(self, shape: Shape, at: UPoint, towards: UPoint) -> Shape:
        """``shape`` cut straight across at ``at``: the part on the far side from
        ``towards`` (a unit direction) is kept, e.g. a sleeve ending at the elbow."""
        n = np.asarray(towards, dtype=np.float64)
        n /= max(float(np.hypot(*n)), 1e-9)
        t = np.array([-n[1], n[0]])
        p = np.asarray(at, dtype=np.float64)
        big = 40.0
        keep = np.stack([p + t * big, p - t * big, p - t * big - n * big, p + t * big - n * big])
        return shape.within(self.shape(self.to_px(keep)))

    def piece(
        self,
        shape: Shape,
        color: Color,
        *,
        rim: float = 0.84,
        cast: float = 0.16,
        add: bool = True,
        pattern: Callable[[Shape], None] | None = None,
    ) -> Shape:
        """Fill ``shape`` with ``color``: a cast shadow on the figure beneath it first, a rim
        shade (or, on very dark colours, a rim highlight) after."""
        if shape.empty:
            return shape
        if cast > 0 and not self.figure.empty:
            dx, dy = self.rim, self.rim // 2
            shadow = shape.moved(dx, dy).minus(shape).within(self.figure)
            self.c.darken(self.c.soft(shadow, 0.6), cast)
        self.c.fill(shape, color)
        if pattern is not None:
            pattern(shape)
        if rim < 1.0:
            if luminance(color) < 0.14:
                glint = shape.minus(shape.moved(self.rim, self.rim // 2))
                self.c.fill(glint, shade(color, 1.12))
            else:
                side = shape.minus(shape.moved(-self.rim, -(self.rim // 2)))
                self.c.fill(side, shade(color, rim))
        if add:
            self.figure = self.figure.union(shape)
        return shape

    def stripes(self, shape: Shape) -> None:
        """Horizontal stripes of the look's stripe colour across ``shape`` (a garment)."""
        if self.look.stripes is None:
            return
        pitch, width = 0.16, 0.065
        y = self.pr.neck_base + 0.2
        bands = []
        while y < self.pr.knee_y + 1.0:
            bands.append(self.to_px([(-3.0, y), (3.0, y), (3.0, y + width), (-3.0, y + width)]))
            y += pitch
        self.c.fill(self.shape(*bands).within(shape), self.look.stripes[1])

    def detail(self, shape: Shape, color: Color, opacity: float = 1.0) -> None:
        """A flat detail (seam, button, feature) without shading."""
        self.c.fill(shape, color, opacity)

    # --- the whole figure -------------------------------------------------------------------

    def draw(self) -> Shape:
        """Draw the figure; returns its mask."""
        look = self.look
        self.hair_back()
        if look.top == "hoodie":
            self.hood()
        self.legs()
        self.shoes()
        self.lower_garment()
        self.neck()
        self.upper_garment()
        for side in SIDES:
            self.arm(self.b.arms[side])
        self.head()
        self.hair_front()
        if "cap" in look.accessories:
            self.baseball_cap()
        return self.figure

    # --- legs, shoes, lower garments ---------------------------------------------------------

    def _leg_shapes(self, widen: tuple[float, float, float], upto: float = 1.0) -> list[Points]:
        polys = []
        for side in SIDES:
            leg = self.b.legs[side]
            r0, r1, r2 = (r + w for r, w in zip(self.pr.leg_r, widen, strict=True))
            if upto < 1.0:
                end = _lerp(leg.hip, leg.knee, upto)
                polys.append(self.cap(leg.hip, end, r0, r0 + (r1 - r0) * upto))
            else:
                polys.append(self.cap(leg.hip, leg.knee, r0, r1))
                polys.append(self.cap(leg.knee, leg.ankle, r1, r2))
        return polys

    def _pelvis(self, top: float, widen: float = 0.0) -> Points:
        pr = self.pr
        lw = pr.leg_r[0] + widen
        return self.smooth(
            [
                (-pr.waist_w - widen * 0.5, top),
                (-pr.hip_w - widen, pr.hip_y),
                (-(pr.hip_x + lw * 0.9), pr.hip_y + 0.35),
                (0.0, pr.crotch_y),
                (pr.hip_x + lw * 0.9, pr.hip_y + 0.35),
                (pr.hip_w + widen, pr.hip_y),
                (pr.waist_w + widen * 0.5, top),
                (0.0, top - 0.02),
            ]
        )

    def legs(self) -> None:
        look = self.look
        covered = look.bottom in ("jeans", "trousers") or look.top == "suit"
        if covered:
            return
        skin_legs = self.shape(*self._leg_shapes((-0.02, -0.01, 0.0)))
        self.piece(skin_legs, self.skin, rim=0.88, cast=0.0)

    def lower_garment(self) -> None:
        look, pr = self.look, self.pr
        top = pr.waist_y + 0.15
        if look.top == "suit":
            kind, color = "trousers", look.top_color[1]
        elif look.bottom is None:
            return
        else:
            kind, color = look.bottom, look.bottom_color[1]
        if kind in ("jeans", "trousers"):
            widen = (0.05, 0.05, 0.07) if kind == "trousers" else (0.03, 0.025, 0.04)
            shape = self.shape(self._pelvis(top, 0.02), *self._leg_shapes(widen))
            hem = max(leg.ankle[1] for leg in self.b.legs.values()) + 0.06
            shape = self.cut(shape, (0.0, hem), (0.0, 1.0))
            self.piece(shape, color, rim=0.82, cast=0.0)
            self._inseams(color, kind)
        elif kind == "shorts":
            shape = self.shape(self._pelvis(top, 0.03), *self._leg_shapes((0.07, 0.07, 0.0), 0.62))
            hem = pr.hip_y + 0.5 * (pr.knee_y - pr.hip_y)
            shape = self.cut(shape, (0.0, hem), (0.0, 1.0))
            self.piece(shape, color, rim=0.82, cast=0.12)
            self._inseams(color, kind)
        elif kind == "skirt":
            hem = pr.knee_y + 0.45 if self._long(look) else pr.knee_y - 0.12
            self.piece(self.shape(self._skirt(top, hem)), color, rim=0.82, cast=0.12)

    @staticmethod
    def _long(look: Look) -> bool:
        """Whether a dress or skirt reaches below the knee (asked for, or elegant by default)."""
        return look.long_hem if look.long_hem is not None else look.outfit_style == "elegant"

    def _skirt(self, top: float, hem: float) -> Points:
        pr = self.pr
        flare = pr.hip_w * 1.18 + 0.12 + 0.1 * (hem - pr.knee_y)
        return self.smooth(
            [
                (-pr.waist_w - 0.01, top - 0.05),
                (-pr.hip_w - 0.04, pr.hip_y),
                (-flare, hem),
                (-flare * 0.5, hem + 0.05),
                (0.0, hem + 0.06),
                (flare * 0.5, hem + 0.05),
                (flare, hem),
                (pr.hip_w + 0.04, pr.hip_y),
                (pr.waist_w + 0.01, top - 0.05),
                (0.0, top - 0.06),
            ]
        )

    def _inseams(self, color: Color, kind: str) -> None:
        """Seams and creases that make trousers read as trousers."""
        pr = self.pr
        dark = shade(color, 0.72)
        # The fly: a short curved seam from the waistband towards the crotch.
        fly = self.to_px(
            bezier((0.02, pr.waist_y + 0.25), (0.05, pr.hip_y + 0.05), (0.0, pr.crotch_y - 0.08))
        )
        self.detail(self.shape(_line(fly, self.b.s(0.022))), dark, 0.7)
        if kind == "jeans":
            stitch = shade(color, 1.25) if luminance(color) < 0.5 else shade(color, 0.8)
            for side in SIDES:
                pocket = self.to_px(
                    bezier(
                        (side * (pr.waist_w - 0.05), pr.waist_y + 0.3),
                        (side * (pr.waist_w - 0.25), pr.waist_y + 0.35),
                        (side * (pr.hip_w - 0.18), pr.hip_y - 0.15),
                    )
                )
                self.detail(self.shape(_line(pocket, self.b.s(0.018))), stitch, 0.8)
        elif kind == "trousers":
            for side in SIDES:
                leg = self.b.legs[side]
                crease = self.to_px(
                    [_lerp(leg.hip, leg.knee, 0.35), leg.knee, _lerp(leg.knee, leg.ankle, 0.95)]
                )
                self.detail(self.shape(_line(crease, self.b.s(0.014))), dark, 0.5)

    def shoes(self) -> None:
        look, pr = self.look, self.pr
        color = look.shoe_color[1]
        for side in SIDES:
            ax, ay = self.b.legs[side].ankle
            sole = pr.sole_y
            tx = ax + side * 0.05
            if look.shoe == "boots":
                shaft = self.to_px(
                    rounded_rect(
                        ax - pr.leg_r[2] - 0.07,
                        ay - 0.5,
                        ax + pr.leg_r[2] + 0.07,
                        sole - 0.08,
                        0.06,
                    )
                )
                toe = self.ell(tx, sole - 0.12, 0.2, 0.13)
                self.piece(self.shape(shaft, toe), color, rim=0.78)
                self.detail(
                    self.shape(
                        self.to_px(
                            rounded_rect(tx - 0.22, sole - 0.06, tx + 0.22, sole + 0.01, 0.03)
                        )
                    ),
                    shade(color, 0.55),
                )
            elif look.shoe == "heels":
                foot = self.cap((ax, ay - 0.05), (tx, sole - 0.1), 0.09, 0.08)
                self.piece(self.shape(foot), self.skin, rim=0.88)
                toe = self.ell(tx + side * 0.02, sole - 0.07, 0.14, 0.085)
                self.piece(self.shape(toe), color, rim=0.78)
                heel = self.to_px(
                    rounded_rect(
                        ax - side * 0.06 - 0.025,
                        sole - 0.1,
                        ax - side * 0.06 + 0.025,
                        sole + 0.03,
                        0.01,
                    )
                )
                self.detail(self.shape(heel), shade(color, 0.7))
            else:
                toe = self.ell(tx, sole - 0.12, 0.24, 0.14)
                heel = self.to_px(rounded_rect(ax - 0.16, ay - 0.06, ax + 0.16, sole - 0.05, 0.08))
                self.piece(self.shape(toe, heel), color, rim=0.8)
                sole_c = (
                    _SOLE_LIGHT
                    if look.shoe == "sneakers" and luminance(color) < 0.8
                    else shade(color, 0.6)
                )
                if look.shoe == "sneakers" and luminance(color) >= 0.8:
                    sole_c = (0.78, 0.79, 0.8)
                strip = self.to_px(
                    rounded_rect(tx - 0.26, sole - 0.07, tx + 0.26, sole + 0.005, 0.035)
                )
                self.detail(self.shape(strip), sole_c)
                if look.shoe == "sneakers":
                    lace = self.to_px([(ax - 0.06, ay + 0.02), (ax + 0.06, ay + 0.02)])
                    self.detail(
                        self.shape(_line(lace, self.b.s(0.03))),
                        shade(color, 0.8) if luminance(color) > 0.5 else shade(color, 1.3),
                    )

    # --- torso --------------------------------------------------------------------------------

    def neck(self) -> None:
        pr = self.pr
        neck = self.cap(
            (0.0, pr.chin - 0.2), (0.0, pr.neck_base + 0.1), pr.neck_r, pr.neck_r * 1.08
        )
        chest = self.smooth(
            [
                (-pr.neck_r * 1.6, pr.neck_base - 0.02),
                (0.0, pr.neck_base + 0.7),
                (pr.neck_r * 1.6, pr.neck_base - 0.02),
                (0.0, pr.neck_base - 0.05),
            ]
        )
        shape = self.shape(neck, chest)
        self.piece(shape, self.skin, rim=0.86, cast=0.0)
        chin_shadow = self.shape(self.ell(0.0, pr.chin + 0.02, pr.head_rx * 0.7, 0.14)).within(
            shape
        )
        self.c.fill(chin_shadow, shade(self.skin, 0.82))

    def _torso(
        self,
        neck_depth: float,
        hem: float,
        hem_w: float,
        shoulder: float | None = None,
        flare: float = 0.0,
        loose: bool = False,
    ) -> Points:
        """A garment's upper-body outline: neckline dip ``neck_depth`` below the neck base,
        hem at ``hem`` with half-width ``hem_w``; ``shoulder`` narrows the shoulders (straps);
        ``loose`` garments hang straight instead of following the waist."""
        pr = self.pr
        nx = pr.neck_r * 1.45
        sx = pr.shoulder_x + 0.04 if shoulder is None else shoulder
        top_y = pr.shoulder_y - pr.arm_r[0] - 0.05 if shoulder is None else pr.neck_base + 0.08
        waist_w = pr.waist_w + 0.02 + flare * 0.3
        if loose:
            waist_w = max(waist_w, 0.35 * waist_w + 0.65 * (pr.chest_w + hem_w) / 2)
        if self.look.build == "plus-size":
            waist_w += 0.06  # a rounder belly line
            hem_w = max(hem_w, waist_w - 0.04)
        pts: list[UPoint] = [
            (-nx, pr.neck_base - 0.03),
            (-(nx + sx) / 2 - 0.02, pr.neck_base + 0.02 + 0.4 * (top_y - pr.neck_base)),
            (-sx, top_y),
            (-sx - 0.02, top_y + 0.12),
            (-pr.chest_w - 0.02, pr.chest_y),
            (-waist_w, pr.waist_y),
            (-hem_w, hem),
            (0.0, hem + 0.03),
            (hem_w, hem),
            (waist_w, pr.waist_y),
            (pr.chest_w + 0.02, pr.chest_y),
            (sx + 0.02, top_y + 0.12),
            (sx, top_y),
            ((nx + sx) / 2 + 0.02, pr.neck_base + 0.02 + 0.4 * (top_y - pr.neck_base)),
            (nx, pr.neck_base - 0.03),
            (0.0, pr.neck_base + neck_depth),
        ]
        return self.smooth(pts)

    def _hem(self, kind: str) -> tuple[float, float]:
        pr = self.pr
        tucked = kind == "shirt" and self.look.outfit_style in ("business", "elegant")
        if tucked:
            return pr.waist_y + 0.3, pr.waist_w + 0.06
        return {
            "t-shirt": (pr.hip_y + 0.1, pr.hip_w + 0.07),
            "polo": (pr.hip_y + 0.1, pr.hip_w + 0.07),
            "shirt": (pr.hip_y + 0.15, pr.hip_w + 0.07),
            "tank top": (pr.hip_y + 0.04, pr.hip_w + 0.06),
            "sweater": (pr.hip_y + 0.1, pr.hip_w + 0.06),
            "hoodie": (pr.hip_y + 0.12, pr.hip_w + 0.06),
            "jacket": (pr.hip_y + 0.18, pr.hip_w + 0.08),
            "blazer": (pr.hip_y + 0.3, pr.hip_w + 0.07),
            "suit": (pr.hip_y + 0.3, pr.hip_w + 0.07),
            "coat": (pr.knee_y - 0.1, pr.hip_w + 0.3)
            if self.look.long_hem is not False
            else (pr.hip_y + 0.45, pr.hip_w + 0.14),
        }.get(kind, (pr.hip_y + 0.1, pr.hip_w + 0.04))

    def upper_garment(self) -> None:
        look, pr = self.look, self.pr
        kind, color = look.top, look.top_color[1]
        if kind == "dress":
            self._dress(color)
            return
        if kind in ("jacket", "blazer", "coat", "suit"):
            self._layered(kind, color)
            return
        depth = {
            "t-shirt": 0.14,
            "polo": 0.2,
            "shirt": 0.3,
            "tank top": 0.34,
            "sweater": 0.1,
            "hoodie": 0.12,
        }.get(kind, 0.14)
        hem, hem_w = self._hem(kind)
        shoulder = pr.neck_r * 1.45 + 0.2 if kind == "tank top" else None
        loose = kind in ("t-shirt", "sweater", "hoodie", "polo") or self.look.build == "plus-size"
        outline = self._torso(depth, hem, hem_w, shoulder, loose=loose)
        torso = self.piece(self.shape(outline), color, cast=0.14, pattern=self.stripes)
        if kind in ("shirt", "polo"):
            self._collar(color, open_front=kind == "shirt")
            self._placket(color, hem, 2 if kind == "polo" else 5)
        elif kind in ("t-shirt", "sweater", "hoodie"):
            self._neckband(color, depth)
        if kind in ("sweater", "hoodie"):
            band = self.shape(
                self.to_px(rounded_rect(-hem_w - 0.1, hem - 0.16, hem_w + 0.1, hem + 0.1, 0.02))
            )
            self.detail(band.within(torso), shade(color, 0.86))
        if kind == "hoodie":
            self._hoodie_front(color, hem)
        if kind == "shirt" and hem < pr.hip_y:
            self._belt()

    def _neckband(self, color: Color, depth: float) -> None:
        pr = self.pr
        nx = pr.neck_r * 1.45
        path = self.to_px(
            bezier(
                (-nx, pr.neck_base - 0.03),
                (0.0, pr.neck_base + 2 * depth),
                (nx, pr.neck_base - 0.03),
            )
        )
        self.detail(self.shape(_line(path, self.b.s(0.055))), shade(color, 0.86))

    def _collar(self, color: Color, open_front: bool) -> None:
        pr = self.pr
        nr = pr.neck_r
        collar_c = shade(color, 1.08) if luminance(color) < 0.9 else (0.97, 0.97, 0.97)
        for side in SIDES:
            tip_y = pr.neck_base + (0.3 if open_front else 0.2)
            poly = self.to_px(
                [
                    (side * 0.02, tip_y),
                    (side * (nr + 0.02), pr.neck_base - 0.12),
                    (side * (nr + 0.2), pr.neck_base - 0.02),
                    (side * (nr + 0.2), pr.neck_base + 0.12),
                ]
            )
            self.piece(self.shape(poly), collar_c, rim=0.85, cast=0.2, add=False)

    def _placket(self, color: Color, hem: float, buttons: int) -> None:
        pr = self.pr
        top = pr.neck_base + 0.3
        line = self.to_px([(0.0, top), (0.0, hem - 0.02)])
        self.detail(self.shape(_line(line, self.b.s(0.02))), shade(color, 0.8), 0.8)
        step = (hem - top - 0.1) / max(1, buttons)
        for i in range(buttons):
            y = top + 0.1 + i * step
            self.detail(self.shape(self.ell(0.0, y, 0.028, 0.028)), shade(color, 0.7))

    def _belt(self) -> None:
        pr = self.pr
        y = pr.waist_y + 0.3
        band = self.to_px(
            rounded_rect(-pr.waist_w - 0.06, y - 0.05, pr.waist_w + 0.06, y + 0.05, 0.02)
        )
        belt_c = (0.22, 0.15, 0.1)
        self.piece(self.shape(band), belt_c, rim=0.8, cast=0.1)
        buckle = self.to_px(rounded_rect(-0.07, y - 0.06, 0.07, y + 0.06, 0.02))
        self.detail(self.shape(buckle), (0.78, 0.66, 0.36))

    def _hoodie_front(self, color: Color, hem: float) -> None:
        pr = self.pr
        top = pr.waist_y + 0.2
        pocket = self.to_px([(-0.36, hem - 0.17), (-0.26, top), (0.26, top), (0.36, hem - 0.17)])
        self.detail(self.shape(pocket), shade(color, 0.92))
        for side in SIDES:
            edge = self.to_px([(side * 0.26, top), (side * 0.36, hem - 0.17)])
            self.detail(self.shape(_line(edge, self.b.s(0.025))), shade(color, 0.8))
        string = (0.95, 0.95, 0.93) if luminance(color) < 0.7 else shade(color, 0.7)
        for side in SIDES:
            path = self.to_px([(side * 0.1, pr.neck_base + 0.12), (side * 0.12, pr.chest_y + 0.25)])
            self.detail(self.shape(_line(path, self.b.s(0.03))), string)
            self.detail(self.shape(self.ell(side * 0.12, pr.chest_y + 0.28, 0.025, 0.04)), string)

    def hood(self) -> None:
        pr = self.pr
        color = shade(self.look.top_color[1], 0.8)
        hood = self.ell(0.0, pr.neck_base - 0.02, pr.neck_r * 2.9, 0.3)
        self.piece(self.shape(hood), color, rim=0.9, cast=0.0)

    def _layered(self, kind: str, color: Color) -> None:
        """An open jacket, blazer, coat or suit jacket over a shirt or top."""
        look, pr = self.look, self.pr
        inner_kind = "shirt" if kind in ("blazer", "suit", "coat") else "t-shirt"
        inner = look.inner_color[1]
        ihem, ihem_w = (pr.hip_y + 0.1, pr.hip_w)
        self.piece(
            self.shape(self._torso(0.3 if inner_kind == "shirt" else 0.14, ihem, ihem_w)),
            inner,
            cast=0.12,
        )
        if inner_kind == "shirt":
            self._collar(inner, open_front=kind != "suit" or look.presentation == "female")
        else:
            self._neckband(inner, 0.14)
        if kind == "suit" and look.presentation != "female":
            self._tie()
        hem, hem_w = self._hem(kind)
        outer = self.shape(
            self._torso(0.0, hem, hem_w, None, flare=0.2 if kind == "coat" else 0.0, loose=True)
        )
        closed = kind in ("blazer", "suit")
        button_y = pr.waist_y + 0.05
        vb = button_y if closed else hem + 0.1
        opening = self.to_px(
            [
                (-pr.neck_r * 1.3, pr.neck_base - 0.2),
                (pr.neck_r * 1.3, pr.neck_base - 0.2),
                (0.03, vb),
                (-0.03, vb),
            ]
        )
        if closed:
            split = self.to_px([(0.0, button_y + 0.1), (0.14, hem + 0.2), (-0.14, hem + 0.2)])
            gap = self.shape(opening, split)
        else:
            gap = self.shape(
                self.to_px(
                    [
                        (-pr.neck_r * 1.3, pr.neck_base - 0.2),
                        (pr.neck_r * 1.3, pr.neck_base - 0.2),
                        (0.2, hem + 0.2),
                        (-0.2, hem + 0.2),
                    ]
                )
            )
        jacket = outer.minus(gap)
        self.piece(jacket, color, rim=0.82, cast=0.18)
        lapel_c = shade(color, 0.84) if luminance(color) > 0.14 else shade(color, 1.3)
        for side in SIDES:
            x0 = pr.neck_r * 1.3 * side
            if closed:
                lapel = self.to_px(
                    [
                        (x0, pr.neck_base - 0.05),
                        (side * (pr.neck_r * 1.3 + 0.3), pr.chest_y - 0.25),
                        (side * (pr.neck_r * 1.3 + 0.18), pr.chest_y - 0.12),
                        (side * 0.04, button_y - 0.02),
                    ]
                )
            else:
                lapel = self.to_px(
                    [
                        (x0, pr.neck_base - 0.05),
                        (side * (pr.neck_r * 1.3 + 0.26), pr.chest_y - 0.2),
                        (side * 0.22, pr.chest_y + 0.35),
                        (side * 0.2, pr.chest_y + 0.15),
                    ]
                )
            self.piece(
                self.shape(lapel).within(jacket.union(self.shape(lapel))),
                lapel_c,
                rim=0.9,
                cast=0.15,
                add=False,
            )
        if closed:
            self.detail(self.shape(self.ell(0.0, button_y + 0.03, 0.035, 0.035)), shade(color, 0.6))
        if kind == "coat":
            belt = self.shape(
                self.to_px(
                    rounded_rect(
                        -pr.waist_w - 0.2,
                        pr.waist_y - 0.02,
                        pr.waist_w + 0.2,
                        pr.waist_y + 0.1,
                        0.03,
                    )
                )
            )
            self.detail(belt.within(jacket), shade(color, 0.78))

    def _tie(self) -> None:
        pr = self.pr
        color = (0.55, 0.12, 0.18) if self.look.inner_color[0] != "red" else (0.12, 0.16, 0.35)
        knot = self.to_px(
            [
                (-0.055, pr.neck_base + 0.02),
                (0.055, pr.neck_base + 0.02),
                (0.04, pr.neck_base + 0.12),
                (-0.04, pr.neck_base + 0.12),
            ]
        )
        blade = self.to_px(
            [
                (-0.04, pr.neck_base + 0.11),
                (0.04, pr.neck_base + 0.11),
                (0.085, pr.waist_y - 0.1),
                (0.0, pr.waist_y + 0.02),
                (-0.085, pr.waist_y - 0.1),
            ]
        )
        self.piece(self.shape(blade), color, rim=0.8, cast=0.12, add=False)
        self.piece(self.shape(knot), shade(color, 0.9), rim=1.0, cast=0.0, add=False)

    def _dress(self, color: Color) -> None:
        look, pr = self.look, self.pr
        hem = pr.ankle_y - 0.25 if self._long(look) else pr.knee_y - 0.05
        bodice = self._torso(0.36, pr.waist_y + 0.2, pr.waist_w + 0.02, pr.neck_r * 1.45 + 0.22)
        skirt = self._skirt(pr.waist_y + 0.05, hem)
        dress = self.piece(
            self.shape(bodice, skirt), color, rim=0.82, cast=0.12, pattern=self.stripes
        )
        sash = self.shape(
            self.to_px(
                rounded_rect(
                    -pr.waist_w - 0.1, pr.waist_y - 0.02, pr.waist_w + 0.1, pr.waist_y + 0.1, 0.02
                )
            )
        )
        self.detail(sash.within(dress), shade(color, 0.78))

    # --- arms and hands -------------------------------------------------------------------------

    def arm(self, arm: Arm) -> None:
        look, pr = self.look, self.pr
        r0, r1, r2 = pr.arm_r
        kind, color = look.top, look.top_color[1]
        sleeve_len = {"t-shirt": 0.5, "polo": 0.5, "tank top": 0.0, "dress": 0.0}.get(kind, 1.0)
        if kind in ("jacket", "blazer", "coat", "suit"):
            sleeve_len = 1.0
        bare = sleeve_len < 1.0
        if bare:
            skin = self.shape(
                self.cap(arm.shoulder, arm.elbow, r0, r1), self.cap(arm.elbow, arm.wrist, r1, r2)
            )
            self.piece(skin, self.skin, rim=0.86, cast=0.16)
        if sleeve_len > 0:
            w = 0.05 if kind in ("coat", "blazer", "suit", "hoodie", "sweater", "jacket") else 0.035
            if sleeve_len >= 1.0:
                end = _lerp(arm.elbow, arm.wrist, 0.96)
                sleeve = self.shape(
                    self.cap(arm.shoulder, arm.elbow, r0 + w + 0.02, r1 + w),
                    self.cap(arm.elbow, arm.wrist, r1 + w, r2 + w),
                )
                sleeve = self.cut(sleeve, end, _sub(arm.wrist, arm.elbow))
            else:
                end = _lerp(arm.shoulder, arm.elbow, sleeve_len)
                sleeve = self.shape(self.cap(arm.shoulder, arm.elbow, r0 + w + 0.03, r1 + w + 0.03))
                sleeve = self.cut(sleeve, end, _sub(arm.elbow, arm.shoulder))
            self.piece(sleeve, color, rim=0.82, cast=0.2, pattern=self.stripes)
            if sleeve_len >= 1.0:
                cuff_c = (
                    look.inner_color[1]
                    if kind in ("blazer", "suit", "coat")
                    else shade(color, 0.86)
                )
                start = _lerp(arm.elbow, arm.wrist, 0.84)
                cuff = self.cut(sleeve, start, _sub(arm.elbow, arm.wrist))
                self.detail(cuff, cuff_c)
        self.hand(arm)

    def hand(self, arm: Arm) -> None:
        """The hand at the end of ``arm``, drawn as simple rounded shapes (a mitten with a
        thumb, an open waving hand, a fist, a palm held up)."""
        if arm.hand == "hidden":
            pocket = self.to_px(
                [
                    (arm.wrist[0] - 0.14, arm.wrist[1] - 0.02),
                    (arm.wrist[0] + 0.14, arm.wrist[1] + 0.02),
                ]
            )
            dark = shade(self.look.bottom_color[1], 0.6) if self.look.bottom else (0.2, 0.2, 0.2)
            self.detail(self.shape(_line(pocket, self.b.s(0.04))), dark)
            return
        d = arm.hand_dir
        along = math.atan2(d[1], d[0])
        ang = along - math.pi / 2
        wx, wy = arm.wrist
        side = arm.side
        k = 1.25 * self.pr.hand / 0.6
        inward = (-side, 0.0)
        if arm.hand == "fist":
            c = (wx + d[0] * 0.12 * k, wy + d[1] * 0.12 * k)
            fist = self.ell(c[0], c[1], 0.13 * k, 0.14 * k, ang)
            thumb = self.ell(c[0] + inward[0] * 0.08 * k, c[1] + 0.02, 0.05 * k, 0.07 * k, ang)
            self.piece(self.shape(fist, thumb), self.skin, rim=0.86, cast=0.15)
            return
        if arm.hand == "open":
            palm_c = (wx + d[0] * 0.15 * k, wy + d[1] * 0.15 * k)
            palm = self.ell(palm_c[0], palm_c[1], 0.14 * k, 0.15 * k, ang)
            parts = [palm]
            for i, spread in enumerate((-0.34, -0.11, 0.12, 0.34)):
                fa = along + spread * side
                base = (palm_c[0] + math.cos(fa) * 0.07 * k, palm_c[1] + math.sin(fa) * 0.07 * k)
                length = (0.19, 0.22, 0.21, 0.17)[i] * k
                tip = (base[0] + math.cos(fa) * length, base[1] + math.sin(fa) * length)
                parts.append(self.cap(base, tip, 0.05 * k, 0.043 * k))
            ta = along - side * 1.2
            tbase = (palm_c[0] + math.cos(ta) * 0.07 * k, palm_c[1] + math.sin(ta) * 0.07 * k)
            ttip = (tbase[0] + math.cos(ta) * 0.15 * k, tbase[1] + math.sin(ta) * 0.15 * k)
            parts.append(self.cap(tbase, ttip, 0.055 * k, 0.045 * k))
            self.piece(self.shape(*parts), self.skin, rim=0.88, cast=0.15)
            return
        if arm.hand == "palm up":
            palm = self.ell(wx + 0.14 * side * k, wy + 0.01, 0.16 * k, 0.075 * k)
            fingers = self.cap(
                (wx + 0.2 * side * k, wy + 0.0),
                (wx + 0.36 * side * k, wy - 0.03),
                0.06 * k,
                0.045 * k,
            )
            thumb = self.cap(
                (wx + 0.08 * side * k, wy - 0.02),
                (wx + 0.16 * side * k, wy - 0.12 * k),
                0.045 * k,
                0.038 * k,
            )
            self.piece(self.shape(palm, fingers, thumb), self.skin, rim=0.86, cast=0.15)
            return
        # Relaxed or resting on a hip: a mitten (palm and closed fingers) with the thumb in front.
        palm_c = (wx + d[0] * 0.12 * k, wy + d[1] * 0.12 * k)
        palm = self.ell(palm_c[0], palm_c[1], 0.1 * k, 0.13 * k, ang)
        fingers = self.cap(
            palm_c, (palm_c[0] + d[0] * 0.17 * k, palm_c[1] + d[1] * 0.17 * k), 0.085 * k, 0.06 * k
        )
        thumb_tip = (palm_c[0] + inward[0] * 0.11 * k + d[0] * 0.04, palm_c[1] + d[1] * 0.06 * k)
        thumb = self.cap(
            (wx + d[0] * 0.05 * k, wy + d[1] * 0.05 * k), thumb_tip, 0.045 * k, 0.036 * k
        )
        self.piece(self.shape(palm, fingers, thumb), self.skin, rim=0.86, cast=0.15)

    # --- head -----------------------------------------------------------------------------------

    def _face_outline(self) -> list[UPoint]:
        look, pr = self.look, self.pr
        rx = pr.head_rx
        if look.age == "child":
            jaw, jaw_y, chin_w = rx * 0.92, 0.78, 0.2
        elif look.presentation == "female":
            jaw, jaw_y, chin_w = rx * 0.78, 0.8, 0.13
        elif look.presentation == "male":
            jaw, jaw_y, chin_w = rx * 0.88, 0.83, 0.19
        else:
            jaw, jaw_y, chin_w = rx * 0.83, 0.81, 0.16
        if look.build == "plus-size":
            jaw *= 1.06
        return [
            (0.0, 0.0),
            (rx * 0.78, 0.07),
            (rx, 0.32),
            (rx * 0.99, 0.55),
            (jaw, jaw_y),
            (chin_w, 0.97),
            (0.0, 1.0),
            (-chin_w, 0.97),
            (-jaw, jaw_y),
            (-rx * 0.99, 0.55),
            (-rx, 0.32),
            (-rx * 0.78, 0.07),
        ]

    def head(self) -> None:
        look, pr = self.look, self.pr
        rx = pr.head_rx
        for side in SIDES:
            ear = self.shape(self.ell(side * (rx - 0.01), 0.56, 0.075, 0.12))
            self.piece(ear, self.skin, rim=0.85, cast=0.0)
            self.detail(
                self.shape(self.ell(side * (rx + 0.005), 0.57, 0.03, 0.065)),
                shade(self.skin, 0.8),
                0.7,
            )
            if "earrings" in look.accessories:
                self.detail(
                    self.shape(self.ell(side * (rx + 0.01), 0.7, 0.03, 0.03)), (0.86, 0.7, 0.3)
                )
        face = self.shape(self.smooth(self._face_outline()))
        self.piece(face, self.skin, rim=0.9, cast=0.0)
        self.face_features(face)

    def face_features(self, face: Shape) -> None:
        look = self.look
        child = look.age == "child"
        ey = 0.56 if child else 0.53
        ex = 0.16
        er = 0.052 if child else 0.043
        brow_c = (
            shade(look.hair, 0.7)
            if look.hair_color not in ("white", "grey", "platinum", "blonde")
            else shade(look.hair, 0.6)
        )
        if look.hair_style == "bald":
            brow_c = shade(self.skin, 0.55)
        for side in SIDES:
            x = side * ex
            self.detail(self.shape(self.ell(x, ey, er, er * 1.25)), _EYE)
            self.detail(
                self.shape(self.ell(x - 0.014, ey - 0.018, er * 0.32, er * 0.32)), _WHITE, 0.9
            )
            if look.presentation == "female":
                lash = self.to_px(
                    bezier(
                        (x + side * er * 0.6, ey - er * 0.7),
                        (x + side * er * 1.5, ey - er * 1.0),
                        (x + side * er * 1.9, ey - er * 1.6),
                    )
                )
                self.detail(self.shape(_line(lash, self.b.s(0.018))), _EYE)
            brow_y = ey - (0.12 if look.expression == "smile" else 0.1)
            brow = bezier(
                (side * 0.07, brow_y + 0.015),
                (side * 0.15, brow_y - 0.035),
                (side * 0.245, brow_y + 0.01),
            )
            weight = 0.03 if look.presentation == "female" else 0.042
            self.detail(self.shape(self.to_px(stroke(brow, weight, weight * 0.7))), brow_c)
            blush = self.shape(self.ell(side * 0.22, 0.72, 0.075, 0.045)).within(face)
            self.detail(blush, (0.95, 0.45, 0.45), 0.16 if luminance(self.skin) > 0.4 else 0.08)
        # The nose: a soft shadow on the lit side's opposite and a small tip.
        nose = self.to_px(bezier((0.03, 0.6), (0.06, 0.69), (0.0, 0.73), (-0.04, 0.72)))
        self.detail(self.shape(_line(nose, self.b.s(0.024))), shade(self.skin, 0.72))
        if "freckles" in look.accessories:
            rng = np.random.default_rng(7)
            for side in SIDES:
                for _ in range(7):
                    fx = side * (0.17 + rng.uniform(-0.06, 0.07))
                    fy = 0.68 + rng.uniform(-0.04, 0.05)
                    self.detail(
                        self.shape(self.ell(fx, fy, 0.011, 0.011)), shade(self.skin, 0.7), 0.8
                    )
        self.mouth()
        if "beard" in look.accessories:
            self.beard(face)
        if "moustache" in look.accessories or "beard" in look.accessories:
            self.moustache()
        if "glasses" in look.accessories or "sunglasses" in look.accessories:
            self.glasses(ey, ex, sun="sunglasses" in look.accessories)

    def mouth(self) -> None:
        look = self.look
        my = 0.83
        if look.expression == "smile":
            w = 0.11
            upper = bezier((-w, my), (0.0, my + 0.035), (w, my))
            lower = bezier((w, my), (0.0, my + 0.12), (-w, my))
            shape = self.shape(self.to_px(np.concatenate([upper, lower])))
            self.detail(shape, _MOUTH)
            teeth = self.shape(self.ell(0.0, my + 0.01, w * 0.85, 0.035)).within(shape)
            self.detail(teeth, (0.98, 0.97, 0.95))
        else:
            path = self.to_px(bezier((-0.08, my + 0.02), (0.0, my + 0.035), (0.08, my + 0.02)))
            self.detail(self.shape(_line(path, self.b.s(0.028))), _MOUTH)
        if look.presentation == "female" and look.expression != "smile":
            lip = self.shape(self.ell(0.0, my + 0.05, 0.065, 0.025))
            self.detail(lip, mix(self.skin, _LIP, 0.6), 0.8)

    def beard(self, face: Shape) -> None:
        rx = self.pr.head_rx
        outline = [
            (-rx * 1.01, 0.5),
            (-rx * 0.95, 0.8),
            (-0.2, 1.02),
            (0.0, 1.07),
            (0.2, 1.02),
            (rx * 0.95, 0.8),
            (rx * 1.01, 0.5),
            (rx * 0.8, 0.62),
            (0.2, 0.78),
            (0.1, 0.8),
            (0.0, 0.79),
            (-0.1, 0.8),
            (-0.2, 0.78),
            (-rx * 0.8, 0.62),
        ]
        beard = self.shape(self.smooth(outline))
        mouth_hole = self.shape(self.ell(0.0, 0.86, 0.1, 0.055))
        self.piece(beard.minus(mouth_hole), self.look.hair, rim=0.85, cast=0.1, add=False)

    def moustache(self) -> None:
        shape = self.shape(
            self.smooth(
                [
                    (-0.15, 0.8),
                    (-0.06, 0.75),
                    (0.0, 0.77),
                    (0.06, 0.75),
                    (0.15, 0.8),
                    (0.06, 0.81),
                    (0.0, 0.8),
                    (-0.06, 0.81),
                ]
            )
        )
        self.detail(shape, shade(self.look.hair, 0.9))

    def glasses(self, ey: float, ex: float, sun: bool) -> None:
        frame_c = (0.14, 0.12, 0.12)
        for side in SIDES:
            x = side * ex
            outer = self.shape(
                self.to_px(rounded_rect(x - 0.115, ey - 0.085, x + 0.115, ey + 0.085, 0.06))
            )
            inner = self.shape(
                self.to_px(rounded_rect(x - 0.09, ey - 0.06, x + 0.09, ey + 0.06, 0.045))
            )
            if sun:
                self.detail(outer, frame_c)
                self.detail(
                    self.shape(self.ell(x - 0.04, ey - 0.025, 0.03, 0.015, -0.5)), _WHITE, 0.5
                )
            else:
                self.detail(inner, (0.85, 0.92, 1.0), 0.18)
                self.detail(outer.minus(inner), frame_c)
            temple = self.to_px(
                [(side * (ex + 0.11), ey - 0.03), (side * (self.pr.head_rx + 0.01), ey - 0.05)]
            )
            self.detail(self.shape(_line(temple, self.b.s(0.022))), frame_c)
        bridge = self.to_px(
            bezier((-ex + 0.11, ey - 0.02), (0.0, ey - 0.06), (ex - 0.11, ey - 0.02))
        )
        self.detail(self.shape(_line(bridge, self.b.s(0.022))), frame_c)

    # --- hair -----------------------------------------------------------------------------------

    def _hair_piece(
        self, shape: Shape, add: bool = True, cast: float = 0.12, shine: bool = True
    ) -> None:
        color = self.look.hair
        if self.look.hair_style == "buzz":
            color = mix(color, self.skin, 0.35)
        if not shine:
            # A hairline over hair already drawn: same colour, no edge of its own.
            self.piece(shape, color, rim=1.0, cast=0.0, add=add)
            return
        self.piece(shape, color, rim=0.8, cast=cast, add=add)
        # A shine: a lighter band near the upper-left edge.
        band = shape.minus(shape.moved(self.rim, self.rim)).minus(shape.moved(-self.rim * 2, 0))
        self.c.fill(band, shade(color, 1.14) if luminance(color) < 0.6 else shade(color, 1.06), 0.9)

    def hair_back(self) -> None:
        style, rx = self.look.hair_style, self.pr.head_rx
        if style in ("long", "wavy"):
            length = 2.05 if style == "long" else 1.95
            ctrl: list[UPoint] = [
                (0.0, -0.08),
                (rx + 0.1, 0.1),
                (rx + 0.16, 0.6),
                (rx + 0.2, 1.2),
                (rx + 0.22, length - 0.2),
                (0.3, length),
                (-0.3, length),
                (-(rx + 0.22), length - 0.2),
                (-(rx + 0.2), 1.2),
                (-(rx + 0.16), 0.6),
                (-(rx + 0.1), 0.1),
            ]
            pts = self.smooth(ctrl)
            if style == "wavy":
                pts = self._waved(pts, 0.04, 9.0)
            self._hair_piece(self.shape(pts), add=True, cast=0.0)
        elif style == "bob":
            self._hair_piece(
                self.shape(
                    self.smooth(
                        [
                            (0.0, -0.08),
                            (rx + 0.12, 0.15),
                            (rx + 0.16, 0.7),
                            (rx + 0.15, 1.08),
                            (0.0, 1.12),
                            (-(rx + 0.15), 1.08),
                            (-(rx + 0.16), 0.7),
                            (-(rx + 0.12), 0.15),
                        ]
                    )
                ),
                cast=0.0,
            )
        elif style == "curly":
            cloud = self.smooth(
                [
                    (0.0, -0.16),
                    (rx + 0.25, 0.1),
                    (rx + 0.32, 0.7),
                    (rx + 0.3, 1.35),
                    (0.0, 1.5),
                    (-(rx + 0.3), 1.35),
                    (-(rx + 0.32), 0.7),
                    (-(rx + 0.25), 0.1),
                ]
            )
            self._hair_piece(
                self.shape(wobble(cloud, self.b.p(0.0, 0.6), self.b.s(0.07), 22)), cast=0.0
            )
        elif style == "afro":
            cloud = self.ell(0.0, 0.36, rx + 0.3, 0.66)
            self._hair_piece(
                self.shape(wobble(cloud, self.b.p(0.0, 0.36), self.b.s(0.05), 26)), cast=0.0
            )
        elif style == "ponytail":
            tail = self.smooth(
                [
                    (0.2, 0.1),
                    (rx + 0.25, 0.45),
                    (rx + 0.3, 1.1),
                    (rx + 0.15, 1.75),
                    (rx + 0.05, 1.1),
                    (rx - 0.02, 0.6),
                ]
            )
            self._hair_piece(self.shape(tail), cast=0.0)
        elif style == "bun":
            self._hair_piece(self.shape(self.ell(0.0, -0.1, 0.22, 0.19)), cast=0.0)

    def _waved(self, pts: Points, amount: float, freq: float) -> Points:
        """Ripple an outline sideways with height (wavy hair)."""
        y = (pts[:, 1] - self.b.oy) / self.b.u
        x = (pts[:, 0] - self.b.ox) / self.b.u
        k = np.clip((y - 0.5) / 0.5, 0.0, 1.0)
        offset = amount * np.sin(y * freq) * k * np.sign(x)
        out = pts.copy()
        out[:, 0] += offset * self.b.u
        return out

    def _cap_shape(self, lift: float, hairline: Sequence[UPoint], side_y: float = 0.55) -> Points:
        """A hair cap: the skull's outline raised by ``lift``, down to ``side_y`` at both sides,
        closed by the ``hairline`` (listed from the image's right to its left)."""
        rx = self.pr.head_rx + lift
        ry = 0.5 + lift
        below = math.asin(max(-1.0, min(1.0, (side_y - 0.5) / ry)))
        # From the image's left side, over the top, to its right side (y grows downwards).
        outer = arc(0.0, 0.5, rx, ry, math.pi - below, 2 * math.pi + below, 48)
        inner = catmull_rom(hairline, closed=False, per=10)
        return self.to_px(np.concatenate([outer, inner]))

    def hair_front(self) -> None:
        look = self.look
        style, rx = look.hair_style, self.pr.head_rx
        if style == "bald":
            if look.age in ("senior", "middle-aged"):
                for side in SIDES:
                    patch = self.ell(side * (rx - 0.01), 0.42, 0.07, 0.14)
                    self._hair_piece(self.shape(patch), add=False)
            return
        if style == "buzz":
            line = [
                (rx - 0.02, 0.55),
                (rx - 0.04, 0.3),
                (0.25, 0.19),
                (0.0, 0.17),
                (-0.25, 0.19),
                (-(rx - 0.04), 0.3),
                (-(rx - 0.02), 0.55),
            ]
            self._hair_piece(self.shape(self._cap_shape(0.018, line)), add=False)
            return
        if style in ("short", "short curly"):
            lift = 0.07 if style == "short" else 0.11
            line = [
                (rx - 0.01, 0.55),
                (rx - 0.03, 0.33),
                (0.28, 0.2),
                (0.1, 0.24),
                (-0.12, 0.3),
                (-0.3, 0.27),
                (-(rx - 0.03), 0.33),
                (-(rx - 0.01), 0.55),
            ]
            pts = self._cap_shape(lift, line)
            if style == "short curly":
                pts = wobble(pts, self.b.p(0.0, 0.5), self.b.s(0.05), 20)
            self._hair_piece(self.shape(pts), add=False)
            return
        if style in ("bun", "ponytail", "braids"):
            line = [
                (rx - 0.02, 0.55),
                (rx - 0.06, 0.28),
                (0.16, 0.16),
                (0.0, 0.13),
                (-0.16, 0.16),
                (-(rx - 0.06), 0.28),
                (-(rx - 0.02), 0.55),
            ]
            self._hair_piece(self.shape(self._cap_shape(0.035, line)), add=False)
            if style == "braids":
                self._braids()
            elif style == "ponytail":
                tie = self.ell(rx - 0.02, 0.3, 0.05, 0.06)
                self.detail(self.shape(tie), shade(look.top_color[1], 0.9))
            return
        if style == "afro":
            line = [
                (rx + 0.02, 0.6),
                (rx - 0.02, 0.32),
                (0.2, 0.2),
                (0.0, 0.18),
                (-0.2, 0.2),
                (-(rx - 0.02), 0.32),
                (-(rx + 0.02), 0.6),
            ]
            pts = wobble(self._cap_shape(0.12, line), self.b.p(0.0, 0.45), self.b.s(0.03), 24)
            self._hair_piece(self.shape(pts), add=False, shine=False)
            return
        if style == "bob":
            line = [
                (rx + 0.02, 1.05),
                (rx - 0.03, 0.6),
                (rx - 0.05, 0.36),
                (0.15, 0.3),
                (0.0, 0.31),
                (-0.15, 0.3),
                (-(rx - 0.05), 0.36),
                (-(rx - 0.03), 0.6),
                (-(rx + 0.02), 1.05),
            ]
            self._hair_piece(self.shape(self._cap_shape(0.14, line, side_y=1.05)), add=False)
            return
        # long, wavy and long curly: a centre part and curtains over the shoulders.
        line = [
            (rx - 0.02, 0.6),
            (rx - 0.06, 0.3),
            (0.12, 0.16),
            (0.0, 0.12),
            (-0.12, 0.16),
            (-(rx - 0.06), 0.3),
            (-(rx - 0.02), 0.6),
        ]
        lift = 0.1 if style != "curly" else 0.14
        cap = self._cap_shape(lift, line)
        if style == "curly":
            cap = wobble(cap, self.b.p(0.0, 0.5), self.b.s(0.05), 20)
        shapes = [cap]
        length = {"long": 1.85, "wavy": 1.75, "curly": 1.3}.get(style, 1.8)
        for side in SIDES:
            curtain = self.smooth(
                [
                    (side * 0.2, 0.2),
                    (side * (rx + 0.12), 0.45),
                    (side * (rx + 0.15), 1.0),
                    (side * (rx + 0.2), length - 0.25),
                    (side * (rx + 0.1), length),
                    (side * (rx + 0.02), length - 0.35),
                    (side * (rx - 0.02), 1.0),
                    (side * (rx - 0.05), 0.5),
                ]
            )
            if style == "wavy":
                curtain = self._waved(curtain, 0.035, 10.0)
            elif style == "curly":
                curtain = wobble(curtain, self.b.p(side * (rx + 0.08), 0.9), self.b.s(0.04), 18)
            shapes.append(curtain)
        self._hair_piece(self.shape(*shapes), add=False)

    def _braids(self) -> None:
        rx = self.pr.head_rx
        for side in SIDES:
            links = []
            x0, y0 = side * (rx - 0.02), 0.75
            for i in range(9):
                y = y0 + i * 0.15
                x = x0 + side * (0.06 + 0.012 * i)
                links.append(
                    self.ell(
                        x + (0.02 if i % 2 else -0.02),
                        y,
                        0.085 - 0.003 * i,
                        0.1,
                        0.3 * (1 if i % 2 else -1),
                    )
                )
            self._hair_piece(self.shape(*links), add=False)
            end_y = y0 + 9 * 0.15 - 0.05
            tie = self.ell(x0 + side * 0.17, end_y, 0.04, 0.03)
            self.detail(self.shape(tie), shade(self.look.top_color[1], 0.9))

    def baseball_cap(self) -> None:
        rx = self.pr.head_rx
        color = (
            mix(self.look.top_color[1], (0.1, 0.1, 0.12), 0.35)
            if luminance(self.look.top_color[1]) > 0.75
            else shade(self.look.top_color[1], 0.85)
        )
        dome = self.to_px(
            np.concatenate(
                [
                    arc(0.0, 0.34, rx + 0.07, 0.46, math.pi, 2 * math.pi, 40),
                    [(rx + 0.07, 0.34), (-(rx + 0.07), 0.34)],
                ]
            )
        )
        self.piece(self.shape(dome), color, rim=0.82, cast=0.0, add=False)
        brim = self.ell(0.0, 0.33, rx + 0.12, 0.07)
        self.piece(self.shape(brim), shade(color, 0.8), rim=0.85, cast=0.15, add=False)


def _sub(a: UPoint, b: UPoint) -> UPoint:
    return (a[0] - b[0], a[1] - b[1])


def _lerp(a: UPoint, b: UPoint, t: float) -> UPoint:
    return (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)


def _line(path: Points, width: float) -> Points:
    """A round-ended line of ``width`` pixels along a pixel ``path`` (no taper)."""
    return stroke(path, width, width, taper=False)
