"""The body of an illustrated avatar: proportions for an age group, presentation and build, and
joint positions for a pose.

Lengths are in *head units* (the head's height, skull top to chin); ``y`` grows downwards from
the top of the skull, ``x`` from the body's centre line. :meth:`Body.p` maps a unit point to
canvas pixels. The figure faces the viewer, so the subject's left side (``side = +1``) is on
the image's right, as in MediaPipe's pose landmarks (``left_shoulder`` has the larger ``x``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from pixelmill.engines.avatar.attributes import AgeGroup, Build, Look, Pose, Presentation

Point = tuple[float, float]

LANDMARK_NAMES = (
    "nose",
    "left_shoulder",
    "right_shoulder",
    "left_elbow",
    "right_elbow",
    "left_wrist",
    "right_wrist",
    "left_hip",
    "right_hip",
    "left_knee",
    "right_knee",
    "left_ankle",
    "right_ankle",
)
"""The landmarks both avatar engines report, in MediaPipe's naming (subject's left/right)."""

SIDES = (-1, 1)
"""-1: the subject's right (image left); +1: the subject's left (image right)."""


@dataclass(frozen=True)
class Proportions:
    """Vertical positions and half-widths in head units (see the module docstring)."""

    head_rx: float
    chin: float
    neck_r: float
    neck_base: float
    shoulder_y: float
    shoulder_x: float
    chest_y: float
    chest_w: float
    waist_y: float
    waist_w: float
    hip_y: float
    hip_x: float
    hip_w: float
    crotch_y: float
    knee_y: float
    ankle_y: float
    sole_y: float
    upper_arm: float
    forearm: float
    arm_r: tuple[float, float, float]
    leg_r: tuple[float, float, float]
    hand: float


_HEADS: dict[AgeGroup, float] = {
    "child": 4.7,
    "teen": 6.1,
    "young adult": 6.7,
    "adult": 6.7,
    "middle-aged": 6.6,
    "senior": 6.4,
}
"""Standing height in heads (skull top to sole) per age group: a little stylised (real adults
are 7 to 7.5 heads), so faces read at avatar sizes."""

_WIDTH: dict[AgeGroup, float] = {
    "child": 0.78,
    "teen": 0.9,
    "young adult": 1.0,
    "adult": 1.0,
    "middle-aged": 1.03,
    "senior": 1.0,
}
"""Body width relative to an adult's, per age group (a child's head is large for its body)."""


def proportions(age: AgeGroup, presentation: Presentation, build: Build) -> Proportions:
    """Body proportions for the age group, presentation and build."""
    heads = _HEADS[age]
    k = (heads - 1.0) / 6.3  # below-the-chin lengths relative to a 7.3-head adult
    wk = _WIDTH[age]
    fem = presentation == "female"
    neutral = presentation == "unspecified"
    shoulder = 0.78 if fem else 0.84 if neutral else 0.9
    waist = 0.54 if fem else 0.6 if neutral else 0.64
    hip = 0.78 if fem else 0.72 if neutral else 0.68
    chest_k, waist_k, hip_k, limb_k, shoulder_k = 1.0, 1.0, 1.0, 1.0, 1.0
    if build == "slim":
        chest_k, waist_k, hip_k, limb_k, shoulder_k = 0.92, 0.88, 0.9, 0.85, 0.95
    elif build == "athletic":
        chest_k, waist_k, hip_k, limb_k, shoulder_k = 1.06, 0.98, 0.98, 1.12, 1.08
    elif build == "plus-size":
        chest_k, waist_k, hip_k, limb_k, shoulder_k = 1.22, 1.6, 1.38, 1.4, 1.1
    if age == "child":
        waist, hip = 0.6, 0.64
    arm_scale = wk * limb_k * (0.9 if fem else 1.0)
    leg_scale = wk * limb_k * (1.0 if fem else 0.97)
    return Proportions(
        head_rx=0.43 if age == "child" else 0.4,
        chin=1.0,
        neck_r=(0.12 if fem else 0.15) * wk * (1.12 if build == "plus-size" else 1.0),
        neck_base=1.0 + 0.3 * k,
        shoulder_y=1.0 + 0.62 * k,
        shoulder_x=shoulder * wk * shoulder_k,
        chest_y=1.0 + 1.05 * k,
        chest_w=(shoulder - 0.06) * wk * chest_k,
        waist_y=1.0 + 2.0 * k,
        waist_w=waist * wk * waist_k,
        hip_y=1.0 + 2.75 * k,
        hip_x=(0.38 if fem else 0.35) * wk * hip_k,
        hip_w=hip * wk * hip_k,
        crotch_y=1.0 + 3.1 * k,
        knee_y=1.0 + 4.45 * k,
        ankle_y=1.0 + 6.02 * k,
        sole_y=heads,
        upper_arm=1.38 * k,
        forearm=1.25 * k,
        arm_r=(0.155 * arm_scale, 0.125 * arm_scale, 0.09 * arm_scale),
        leg_r=(0.27 * leg_scale, 0.165 * leg_scale, 0.11 * leg_scale),
        hand=0.6 * (0.85 + 0.15 * k),
    )


@dataclass(frozen=True)
class Arm:
    """One arm: shoulder, elbow, wrist (unit coordinates), where the hand points (unit vector),
    and how the hand is drawn."""

    side: int
    shoulder: Point
    elbow: Point
    wrist: Point
    hand_dir: Point
    hand: str  # "relaxed", "open", "fist", "on hip", "hidden", "palm up"


@dataclass(frozen=True)
class Leg:
    side: int
    hip: Point
    knee: Point
    ankle: Point


@dataclass(frozen=True)
class Body:
    """Proportions and posed joints of one figure, placed on the canvas: unit point ``(x, y)``
    is at pixel ``(ox + x·u, oy + y·u)``."""

    pr: Proportions
    pose: Pose
    arms: dict[int, Arm]
    legs: dict[int, Leg]
    u: float = 1.0
    ox: float = 0.0
    oy: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)

    def p(self, x: float, y: float) -> Point:
        """A unit point in canvas pixels."""
        return (self.ox + x * self.u, self.oy + y * self.u)

    def s(self, length: float) -> float:
        """A unit length in pixels."""
        return length * self.u

    def placed(self, u: float, ox: float, oy: float) -> Body:
        """The same body at another scale and position."""
        return Body(self.pr, self.pose, self.arms, self.legs, u, ox, oy, self.extra)

    def landmarks(self) -> dict[str, list[float]]:
        """The MediaPipe-named landmarks in canvas pixels (see :data:`LANDMARK_NAMES`)."""
        out: dict[str, list[float]] = {"nose": list(self.p(0.0, 0.68))}
        for side, label in ((1, "left"), (-1, "right")):
            arm, leg = self.arms[side], self.legs[side]
            for name, point in (
                ("shoulder", arm.shoulder),
                ("elbow", arm.elbow),
                ("wrist", arm.wrist),
                ("hip", leg.hip),
                ("knee", leg.knee),
                ("ankle", leg.ankle),
            ):
                x, y = self.p(*point)
                out[f"{label}_{name}"] = [round(x, 2), round(y, 2)]
        out["nose"] = [round(v, 2) for v in out["nose"]]
        return {name: out[name] for name in LANDMARK_NAMES}

    def extent(self) -> tuple[float, float, float, float]:
        """Unit-space bounding box ``(x0, y0, x1, y1)`` of the joints, hands and head (hair
        excluded)."""
        xs = [-self.pr.head_rx, self.pr.head_rx]
        ys = [0.0, self.pr.sole_y]
        for arm in self.arms.values():
            tip = (
                arm.wrist[0] + arm.hand_dir[0] * self.pr.hand,
                arm.wrist[1] + arm.hand_dir[1] * self.pr.hand,
            )
            for x, y in (arm.elbow, arm.wrist, tip):
                xs += [x - self.pr.arm_r[0] * 1.4, x + self.pr.arm_r[0] * 1.4]
                ys.append(y - 0.15)
        for leg in self.legs.values():
            xs += [leg.ankle[0] - 0.35, leg.ankle[0] + 0.35]
        xs += [
            -self.pr.hip_w - 0.1,
            self.pr.hip_w + 0.1,
            -self.pr.shoulder_x - 0.25,
            self.pr.shoulder_x + 0.25,
        ]
        return min(xs), min(ys), max(xs), max(ys)


def _direction(side: int, angle: float) -> Point:
    """Unit vector at ``angle`` radians from straight down, turned outwards on ``side``."""
    return (side * math.sin(angle), math.cos(angle))


def _along(p: Point, d: Point, length: float) -> Point:
    return (p[0] + d[0] * length, p[1] + d[1] * length)


def _two_bone(shoulder: Point, target: Point, l1: float, l2: float, side: int) -> Point:
    """Elbow position reaching ``target`` with segments ``l1``, ``l2``, bending outwards."""
    dx, dy = target[0] - shoulder[0], target[1] - shoulder[1]
    d = min(max(math.hypot(dx, dy), abs(l1 - l2) + 1e-3), l1 + l2 - 1e-3)
    a = math.acos(max(-1.0, min(1.0, (l1 * l1 + d * d - l2 * l2) / (2 * l1 * d))))
    base = math.atan2(dy, dx)
    best: Point = shoulder
    for sign in (-1.0, 1.0):
        e = (
            shoulder[0] + l1 * math.cos(base + sign * a),
            shoulder[1] + l1 * math.sin(base + sign * a),
        )
        if best is shoulder or e[0] * side > best[0] * side:
            best = e
    return best


def _unit(v: Point) -> Point:
    n = math.hypot(*v) or 1.0
    return (v[0] / n, v[1] / n)


def _arm_by_angles(pr: Proportions, side: int, upper: float, fore: float, hand: str) -> Arm:
    shoulder = (side * pr.shoulder_x, pr.shoulder_y)
    elbow = _along(shoulder, _direction(side, upper), pr.upper_arm)
    fdir = _direction(side, fore)
    wrist = _along(elbow, fdir, pr.forearm)
    return Arm(side, shoulder, elbow, wrist, fdir, hand)


def _arm_to(pr: Proportions, side: int, target: Point, hand: str, hand_dir: Point) -> Arm:
    shoulder = (side * pr.shoulder_x, pr.shoulder_y)
    elbow = _two_bone(shoulder, target, pr.upper_arm, pr.forearm, side)
    fdir = _unit((target[0] - elbow[0], target[1] - elbow[1]))
    wrist = _along(elbow, fdir, pr.forearm)
    return Arm(side, shoulder, elbow, wrist, _unit(hand_dir), hand)


def _arms(pr: Proportions, pose: Pose, variant: float) -> dict[int, Arm]:
    """Arms for ``pose``; ``variant`` (0..1) nudges the angles so two avatars in the same pose
    are not identical."""
    relaxed_upper = 0.14 + 0.08 * variant
    relaxed_fore = 0.06 + 0.1 * variant
    arms: dict[int, Arm] = {}
    for side in SIDES:
        arms[side] = _arm_by_angles(pr, side, relaxed_upper, relaxed_fore, "relaxed")
    if pose == "waving":
        arms[1] = _arm_by_angles(pr, 1, 2.25 + 0.15 * variant, 2.95 - 0.1 * variant, "open")
    elif pose == "hands on hips":
        for side in SIDES:
            target = (side * (pr.waist_w + 0.08), pr.waist_y + 0.35 * (pr.hip_y - pr.waist_y))
            arms[side] = _arm_to(pr, side, target, "on hip", (-side * 0.8, 0.6))
    elif pose == "hands in pockets":
        for side in SIDES:
            target = (side * (pr.hip_w - 0.2), pr.hip_y + 0.2)
            arms[side] = _arm_to(pr, side, target, "hidden", (-side * 0.3, 1.0))
    elif pose == "presenting":
        arms[1] = _arm_by_angles(pr, 1, 0.5 + 0.1 * variant, 1.55 - 0.1 * variant, "palm up")
    elif pose == "celebrating":
        for side in SIDES:
            arms[side] = _arm_by_angles(pr, side, 2.5 + 0.1 * variant, 2.8, "fist")
    return arms


def _legs(pr: Proportions, pose: Pose, variant: float) -> dict[int, Leg]:
    spread = {"hands on hips": 0.1, "celebrating": 0.12, "presenting": 0.05}.get(pose, 0.03)
    spread += 0.03 * variant
    legs: dict[int, Leg] = {}
    thigh = pr.knee_y - pr.hip_y
    shin = pr.ankle_y - pr.knee_y
    for side in SIDES:
        hip = (side * pr.hip_x, pr.hip_y)
        knee = _along(hip, _direction(side, spread), thigh)
        ankle = _along(knee, _direction(side, spread * 0.4), shin)
        legs[side] = Leg(side, hip, knee, ankle)
    # Keep the soles on one line whatever the spread.
    for side in SIDES:
        leg = legs[side]
        dy = pr.ankle_y - leg.ankle[1]
        legs[side] = Leg(
            side, leg.hip, (leg.knee[0], leg.knee[1] + dy / 2), (leg.ankle[0], pr.ankle_y)
        )
    return legs


def build_body(look: Look, variant: float = 0.0) -> Body:
    """The unplaced body (``u`` = 1, origin at the skull top on the centre line)."""
    pr = proportions(look.age, look.presentation, look.build)
    return Body(pr, look.pose, _arms(pr, look.pose, variant), _legs(pr, look.pose, variant))
