"""Fitting a garment to a body: control points from the garment's shape and the body's
landmarks, the thin-plate-spline warp, the body's shading carried onto the fabric, and the
arms drawn back in front of it.

**Where the garment goes.** The garment's shoulder points land just outside and above the
body's shoulder landmarks (the top of the shoulder, not the joint); that fixes one scale for
the garment (its shoulder width to the body's), so a long tee stays long and a cropped top
short. Each garment row then follows the body's centre line (shoulders to hips, so a leaning
torso leans the garment) and is widened where the body is wider than the garment (hips),
never narrowed: a loose garment hangs loose. Sleeves turn from the garment's flat-lay angle
onto the arm: the sleeve end goes along the upper arm by the sleeve's length, bending at
the elbow for long sleeves. Those points drive a thin-plate spline (``warp.py``).

**Shading.** The body's luminance under the garment is divided by the mean luminance of its
own colour cluster (k-means on chroma, lightness weighted down), which keeps folds and the
rim shade and drops the old clothes' own colours (a white shirt under a navy blazer); the
result, blurred a little and clipped to 0.8..1.12, multiplies the fabric at 70 %.

**Arms in front.** Forearms, hands and the part of the upper arm below the sleeve's end are
the person's own pixels again, over the garment: capsules along the arm landmarks, as wide as
the arm measured on the person's mask.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import ImageArray
from pixelmill.engines.product_photo import Body
from pixelmill.engines.tryon.garment import Garment, Sleeve
from pixelmill.engines.tryon.warp import warp_rgba

Point = tuple[float, float]
Rgb = npt.NDArray[np.float32]
Mask = npt.NDArray[np.float32]

CHEST = 1.0
"""The garment's chest (its body width laid flat) spans this many shoulder widths (the
shoulder landmarks are the joints; a regular fit is a little wider)."""
SHOULDER_UP = 0.1
"""The garment's shoulder line sits this many shoulder widths above the shoulder landmarks
(the landmark is the joint; the seam lies on top of the shoulder)."""
HIP_HALF_WIDTH = 1.7
"""The body's half-width at the hips, in halves of the hip landmarks' distance (hip
landmarks are the joints, well inside the outline)."""
SHOULDER_HALF_WIDTH = 1.0
"""The body's half-width at the shoulders, in halves of the shoulder landmarks' distance."""
EASE = 1.04
"""The garment is at least this much wider than the body it covers."""
TUBE = 2.0 / math.pi
"""A sleeve laid flat is half its circumference wide; worn, a tube seen from the side shows
its diameter: 2/π of the flat width."""
SLEEVE_EASE = 1.15
"""A sleeve is at least this much wider than the arm in it."""
SHADE_STRENGTH = 0.7
SHADE_RANGE = (0.8, 1.12)


def _v(a: Point, b: Point) -> tuple[float, float]:
    return b[0] - a[0], b[1] - a[1]


def _unit(v: tuple[float, float]) -> tuple[float, float]:
    n = math.hypot(*v)
    return (v[0] / n, v[1] / n) if n > 1e-9 else (0.0, 1.0)


@dataclass(frozen=True)
class Part:
    """One piece of the garment (its label in :attr:`Garment.parts`) and its control
    points: garment pixels ``src`` -> working pixels ``dst``."""

    label: int
    src: npt.NDArray[np.float64]
    dst: npt.NDArray[np.float64]


@dataclass(frozen=True)
class Placement:
    """The fit: the body, then each sleeve (drawn over the body), and where the sleeves end
    on the arms (for the arms-in-front mask)."""

    parts: tuple[Part, ...]
    sleeve_ends: dict[str, Point | None]

    @property
    def dst(self) -> npt.NDArray[np.float64]:
        """Every control point's destination."""
        return np.concatenate([p.dst for p in self.parts])

    @property
    def src(self) -> npt.NDArray[np.float64]:
        return np.concatenate([p.src for p in self.parts])


class _Frame:
    """The body's frame: centre line from the shoulder centre to the hip centre, ``across``
    along the shoulder line (towards the wearer's left, image right for a frontal body)."""

    def __init__(self, body: Body) -> None:
        self.body = body
        ls, rs = body["left_shoulder"], body["right_shoulder"]
        self.across = _unit(_v(rs, ls))
        self.top = body.shoulder_mid
        self.axis = _v(body.shoulder_mid, body.hip_mid)
        self.u = body.unit
        sw = body.shoulder_width
        hip_w = math.hypot(*_v(body["right_hip"], body["left_hip"]))
        self.shoulder_half = SHOULDER_HALF_WIDTH * sw / 2
        self.hip_half = max(HIP_HALF_WIDTH * hip_w / 2, 0.6 * self.shoulder_half)

    def centre(self, t: float) -> Point:
        return self.top[0] + t * self.axis[0], self.top[1] + t * self.axis[1]

    def half_width(self, t: float) -> float:
        """The body's half-width at level ``t`` (0: shoulders, 1: hips; constant beyond)."""
        s = min(max(t, 0.0), 1.0)
        return self.shoulder_half + (self.hip_half - self.shoulder_half) * s

    def at(self, t: float, offset: float) -> Point:
        c = self.centre(t)
        return c[0] + offset * self.across[0], c[1] + offset * self.across[1]


def arm_path(
    landmarks: Mapping[str, Point], side: str, lead: float = 0.0
) -> list[tuple[Point, tuple[float, float], float]]:
    """The arm as segments ``(start, direction, length)``: from ``lead`` pixels above the
    shoulder joint (the top of the shoulder, where a sleeve's seam sits) to the elbow, then
    to the wrist (the last one runs on); a missing elbow: one segment hanging down and a
    little out."""
    shoulder = landmarks[f"{side}_shoulder"]
    elbow = landmarks.get(f"{side}_elbow")
    wrist = landmarks.get(f"{side}_wrist")
    if elbow is None:
        d = _unit((0.25 if side == "left" else -0.25, 1.0))
        return [((shoulder[0] - d[0] * lead, shoulder[1] - d[1] * lead), d, math.inf)]
    d1 = _unit(_v(shoulder, elbow))
    start = (shoulder[0] - d1[0] * lead, shoulder[1] - d1[1] * lead)
    upper = (start, d1, math.hypot(*_v(shoulder, elbow)) + lead)
    if wrist is None:
        return [(start, d1, math.inf)]
    return [upper, (elbow, _unit(_v(elbow, wrist)), math.inf)]


def on_arm(
    path: list[tuple[Point, tuple[float, float], float]], along: float, across: float
) -> Point:
    """The point ``along`` the arm (clamped at the shoulder) and ``across`` it (positive: to
    the right of the direction of travel in image coordinates, like the garment's normal)."""
    s = max(0.0, along)
    for start, d, length in path:
        if s <= length:
            return start[0] + d[0] * s - d[1] * across, start[1] + d[1] * s + d[0] * across
        s -= length
    start, d, _ = path[-1]
    return start[0] + d[0] * s - d[1] * across, start[1] + d[1] * s + d[0] * across


def place_garment(
    garment: Garment,
    body: Body,
    landmarks: Mapping[str, Point],
    arm_radii: Mapping[str, float],
) -> Placement:
    """The control points fitting ``garment`` to ``body`` (``arm_radii``: each upper arm's
    half-width on the person, so a sleeve covers it)."""
    frame = _Frame(body)
    sw = body.shoulder_width
    k = CHEST * sw / max(1.0, 2 * garment.half_width)
    g_top = garment.shoulder_mid[1]
    t0 = -SHOULDER_UP * sw / max(1.0, frame.u)
    src: list[Point] = []
    dst: list[Point] = []

    def level(y: float) -> float:
        return t0 + (y - g_top) * k / max(1.0, frame.u)

    def row_point(x: float, y: float, widen: float = 1.0) -> Point:
        return frame.at(level(y), (x - garment.cx) * k * widen)

    # The torso: rows from the neck to the hem, five columns each.
    rows = np.linspace(garment.top_y, garment.hem_y, 8)
    rows = np.unique(np.concatenate([rows, [garment.armpit_y]]))
    for y in rows:
        t = level(float(y))
        if y < garment.armpit_y:
            # Above the armpits a row runs into the sleeves: the body's columns only.
            xl, xr = garment.cx - garment.half_width, garment.cx + garment.half_width
        else:
            xl, xr = garment.sides_at(float(y))
        half_src = max(1.0, (xr - xl) / 2)
        cx = (xl + xr) / 2
        widen = 1.0 if t < 0.2 else max(1.0, EASE * frame.half_width(t) / (half_src * k))
        for f in (-1.0, -0.5, 0.0, 0.5, 1.0):
            x = cx + f * half_src
            # Image x grows towards the wearer's left on a frontal body: same as "across".
            src.append((x, float(y)))
            dst.append(row_point(x, float(y), widen))
    for g_point in (garment.left_shoulder, garment.right_shoulder):
        src.append(g_point)
        dst.append(row_point(*g_point))
    parts = [Part(1, np.asarray(src, np.float64), np.asarray(dst, np.float64))]
    sleeve_ends: dict[str, Point | None] = {"left": None, "right": None}
    sleeves: tuple[tuple[str, int, Sleeve | None], ...] = (
        ("left", 2, garment.left_sleeve),
        ("right", 3, garment.right_sleeve),
    )
    for side, label, sleeve in sleeves:
        if sleeve is None or f"{side}_shoulder" not in landmarks:
            continue
        # The sleeve turns about its root from its flat-lay angle onto the arm (bending at
        # the elbow), keeping its length; across the arm it is a tube seen from the side:
        # 2/π of its flat width (at least as wide as the arm), centred on the arm.
        arm = 2.0 * arm_radii.get(side, 0.0)
        path = arm_path(landmarks, side, 0.7 * arm)
        s_src: list[Point] = [sleeve.root]
        s_dst: list[Point] = [on_arm(path, 0.0, 0.0)]
        for along, first, last in sleeve.sections:
            mid = (first + last) / 2
            flat = max(1.0, last - first)
            squeeze = max(TUBE * k, SLEEVE_EASE * arm / flat)
            for across in (first, mid, last):
                s_src.append(sleeve.point(along, across))
                s_dst.append(on_arm(path, along * k, (across - mid) * squeeze))
        parts.append(Part(label, np.asarray(s_src, np.float64), np.asarray(s_dst, np.float64)))
        sleeve_ends[side] = on_arm(path, sleeve.reach * k, 0.0)
    return Placement(tuple(parts), sleeve_ends)


def warp_garment(
    garment: Garment, placement: Placement, out_hw: tuple[int, int], margin: float
) -> tuple[Rgb, Mask]:
    """The garment warped onto the working image, piece by piece (sleeves over the body):
    straight colour and alpha."""
    h, w = out_hw
    colour = np.zeros((h, w, 3), np.float32)
    alpha = np.zeros((h, w), np.float32)
    for part in placement.parts:
        mine = garment.parts == part.label
        if part.label == 1:
            # A few pixels of overlap under the sleeves, so no seam shows between the pieces.
            mine = cv2.dilate(mine.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
        rgba = garment.rgba.copy()
        rgba[..., 3] = np.where(mine, rgba[..., 3], 0)
        d = part.dst
        box = (
            int(d[:, 0].min() - margin),
            int(d[:, 1].min() - margin),
            int(d[:, 0].max() + margin) + 1,
            int(d[:, 1].max() + margin) + 1,
        )
        c, a = warp_rgba(rgba, part.src, part.dst, out_hw, box)
        colour = np.asarray(c * a[..., None] + colour * (1.0 - a[..., None]), np.float32)
        alpha = np.asarray(a + alpha * (1.0 - a), np.float32)
    straight = colour / np.maximum(alpha, 1e-4)[..., None]
    return np.clip(straight, 0.0, 1.0).astype(np.float32), alpha


# --- shading ---------------------------------------------------------------------------------


def kmeans(points: npt.NDArray[np.float32], k: int, steps: int = 12) -> npt.NDArray[np.float32]:
    """``k`` cluster centres of ``points`` (Lloyd's iterations from evenly spaced points
    of the lightness order: deterministic, no global random state)."""
    order = np.argsort(points[:, 0], kind="stable")
    centres = np.array(points[order[np.linspace(0, len(points) - 1, k).astype(int)]], np.float32)
    for _ in range(steps):
        label = nearest(points, centres)
        for i in range(k):
            members = points[label == i]
            if len(members):
                centres[i] = members.mean(axis=0)
    return centres


def nearest(
    points: npt.NDArray[np.float32], centres: npt.NDArray[np.float32]
) -> npt.NDArray[np.intp]:
    """The index of the nearest centre for each point."""
    d = ((points[:, None, :] - centres[None, :, :]) ** 2).sum(-1)
    return np.asarray(d.argmin(axis=1), np.intp)


def body_shading(rgb: ImageArray, region: npt.NDArray[np.bool_], blur: float) -> Mask:
    """The shading of the body inside ``region`` (1 elsewhere): luminance over the mean
    luminance of its colour cluster, blurred by ``blur`` pixels, clipped to
    :data:`SHADE_RANGE`."""
    h, w = region.shape
    out = np.ones((h, w), np.float32)
    if np.count_nonzero(region) < 50:
        return out
    lab = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2LAB).astype(np.float32)
    feats = np.stack([lab[..., 0] * 0.35, lab[..., 1], lab[..., 2]], axis=-1)[region]
    sample = feats[:: max(1, len(feats) // 20000)]
    label = nearest(feats, kmeans(sample, min(5, len(sample))))
    lum = lab[..., 0][region] + 1.0
    means = np.array(
        [lum[label == i].mean() if np.any(label == i) else 1.0 for i in range(int(label.max()) + 1)]
    )
    ratio = np.ones((h, w), np.float32)
    ratio[region] = lum / means[label]
    weight = region.astype(np.float32)
    sigma = max(0.5, blur)
    num = cv2.GaussianBlur(ratio * weight, (0, 0), sigma)
    den = cv2.GaussianBlur(weight, (0, 0), sigma)
    smooth = np.where(den > 1e-3, num / np.maximum(den, 1e-3), 1.0)
    lo, hi = SHADE_RANGE
    out[region] = np.clip(smooth[region], lo, hi)
    return out


# --- arms in front ---------------------------------------------------------------------------


def _capsule(mask: Mask, a: Point, b: Point, r: float) -> None:
    """Draw a filled capsule (a thick anti-aliased line with round ends) into ``mask``."""
    sh = 2
    pa = (round(a[0] * (1 << sh)), round(a[1] * (1 << sh)))
    pb = (round(b[0] * (1 << sh)), round(b[1] * (1 << sh)))
    cv2.line(mask, pa, pb, 1.0, max(1, round(2 * r)), cv2.LINE_AA, sh)


def arm_radius(alpha: Mask, a: Point, b: Point, cap: float) -> float:
    """The arm's half-width between ``a`` and ``b`` on the person's mask: from points along
    the segment, the distance to the outline on the side that is free (the other side may
    touch the body), the median over the samples; at most ``cap``."""
    h, w = alpha.shape
    d = _unit(_v(a, b))
    n = (-d[1], d[0])
    found = []
    steps = np.arange(0.0, cap * 1.5, 0.5)
    for t in (0.3, 0.45, 0.6, 0.75):
        px, py = a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])
        reach = []
        for sign in (-1.0, 1.0):
            xs = np.clip(np.round(px + sign * n[0] * steps).astype(int), 0, w - 1)
            ys = np.clip(np.round(py + sign * n[1] * steps).astype(int), 0, h - 1)
            outside = np.flatnonzero(alpha[ys, xs] < 0.5)
            reach.append(float(steps[outside[0]]) if outside.size else float(steps[-1]))
        found.append(min(reach))
    return float(min(cap, max(1.5, np.median(found))))


def arms_in_front(
    alpha: Mask, landmarks: Mapping[str, Point], sleeve_ends: Mapping[str, Point | None], u: float
) -> Mask:
    """Where the person's own arms are in front of the garment: forearms and hands, and the
    upper arm from the sleeve's end down (from the shoulder when sleeveless)."""
    h, w = alpha.shape
    mask = np.zeros((h, w), np.float32)
    for side in ("left", "right"):
        shoulder = landmarks.get(f"{side}_shoulder")
        elbow = landmarks.get(f"{side}_elbow")
        wrist = landmarks.get(f"{side}_wrist")
        if elbow is None or shoulder is None:
            continue
        cap = 0.14 * u
        end = sleeve_ends.get(side)
        r_up = arm_radius(alpha, shoulder, elbow, cap) * 1.1
        if wrist is not None:
            r = arm_radius(alpha, elbow, wrist, cap) * 1.1
            d = _unit(_v(elbow, wrist))
            forearm = math.hypot(*_v(elbow, wrist))
            tip = (wrist[0] + d[0] * 0.5 * forearm, wrist[1] + d[1] * 0.5 * forearm)
            _capsule(mask, wrist, tip, r * 1.4)
            if end is not None and _beyond(shoulder, elbow, end):
                # A long sleeve covers the forearm down to its end.
                cuff = _project(end, elbow, wrist)
                cuff = (cuff[0] + d[0] * r, cuff[1] + d[1] * r)
                _capsule(mask, cuff, wrist, r)
                continue
            _capsule(mask, elbow, wrist, r)
        start = _project(end, shoulder, elbow) if end is not None else _lerp(shoulder, elbow, 0.3)
        # The capsule's round cap must not reach back over the sleeve's end.
        d = _unit(_v(shoulder, elbow))
        start = (start[0] + d[0] * r_up, start[1] + d[1] * r_up)
        if _beyond(shoulder, elbow, start):
            continue
        _capsule(mask, start, elbow, r_up)
    soft = cv2.GaussianBlur(mask, (0, 0), 0.8)
    return np.asarray(np.clip(soft, 0.0, 1.0) * alpha, np.float32)


def _lerp(a: Point, b: Point, t: float) -> Point:
    return a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])


def _project(p: Point, a: Point, b: Point) -> Point:
    d = _v(a, b)
    n2 = max(1e-9, d[0] ** 2 + d[1] ** 2)
    t = min(1.0, max(0.0, ((p[0] - a[0]) * d[0] + (p[1] - a[1]) * d[1]) / n2))
    return _lerp(a, b, t)


def _beyond(shoulder: Point, elbow: Point, end: Point) -> bool:
    """Whether ``end`` lies past the elbow along the upper arm."""
    d = _v(shoulder, elbow)
    n2 = max(1e-9, d[0] ** 2 + d[1] ** 2)
    return ((end[0] - shoulder[0]) * d[0] + (end[1] - shoulder[1]) * d[1]) / n2 >= 1.0
