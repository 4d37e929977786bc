"""Where the product goes with the person, by its category: held at a hand the landmarks
place (the hand drawn over it again, so the fingers are in front), worn at the neck, carried
at the hip, or standing on the floor beside the person; scaled in the body's own unit (the
torso length, shoulders to hips), so a ring stays ring-sized and a chair chair-sized on any
avatar at any resolution.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import cv2
import numpy as np

from pixelmill.categories import normalise_category
from pixelmill.engines.base import ImageArray
from pixelmill.engines.product_photo.person import Body
from pixelmill.engines.product_photo.prompt import Hand, Placement
from pixelmill.engines.product_photo.staging import Figure, Grip, Prop
from pixelmill.engines.runtime.layers import alpha_box
from pixelmill.engines.runtime.person import Point

Grasp = Literal["centre", "top"]


@dataclass(frozen=True)
class Rule:
    """How a category is shown: its placements (outputs cycle through them), the product's
    size for each (its long side, or its height on the floor, in torso lengths) and where a
    hand takes it (its centre, or its top: a bag by the handle, a garment by the shoulders)."""

    placements: tuple[Placement, ...]
    sizes: dict[Placement, float]
    grasp: Grasp = "centre"


RULES: dict[str, Rule] = {
    "clothing": Rule(("held",), {"held": 1.05, "floor": 1.05}, "top"),
    "jewelry": Rule(("worn", "held"), {"worn": 0.5, "held": 0.38}),
    "accessories": Rule(("held",), {"held": 0.55}),
    "bags": Rule(("held", "hip"), {"held": 0.75, "hip": 0.7}, "top"),
    "shoes": Rule(("held", "floor"), {"held": 0.6, "floor": 0.45}),
    "electronics": Rule(("held",), {"held": 0.6}),
    "food": Rule(("held",), {"held": 0.55}),
    "beauty": Rule(("held",), {"held": 0.58}),
    "home": Rule(("floor", "held"), {"floor": 1.0, "held": 0.65}),
    "houseware": Rule(("held",), {"held": 0.65}),
    "furniture": Rule(("floor",), {"floor": 1.55}),
    "other": Rule(("held",), {"held": 0.6}),
}
"""Placement rules per product category (the scenes capability's category names). Held
products are drawn about 1.4× their real size against the body (a 20 cm bottle is about 0.4
torso lengths): held a little towards the camera, as product shots with models do."""

FLOOR_MAX_WIDTH = 2.3
"""A floor product is at most this many torso lengths wide (a sofa is scaled down)."""
FALLBACK_SIZE = 0.55
FRONT_SCALE = 1.3
"""A product standing in the foreground is this much larger than held (nearer the camera)."""


def rule_for(category: str) -> Rule:
    return RULES[normalise_category(category)]


def size_for(rule: Rule, placement: Placement) -> float:
    """The product's size for a placement (the category's held size for the fallbacks)."""
    return rule.sizes.get(placement) or rule.sizes.get("held") or FALLBACK_SIZE


MAX_PRODUCT_SIDE = 1600
"""A product cut-out is kept at most this large (long side): no output shows it bigger, and
the float copies compositing makes stay small for a 25-megapixel upload."""


def crop(rgba: ImageArray, max_side: int = MAX_PRODUCT_SIDE) -> ImageArray:
    """The product cut-out cropped to its visible pixels, and shrunk (premultiplied, area
    filter) to at most ``max_side`` on its long side."""
    box = alpha_box(rgba[..., 3].astype(np.float32) / 255.0)
    if box is not None:
        x, y, w, h = box
        rgba = rgba[y : y + h, x : x + w]
    return shrink(np.ascontiguousarray(rgba), max_side)


def shrink(rgba: ImageArray, max_side: int) -> ImageArray:
    """``rgba`` at most ``max_side`` on its long side (premultiplied area resize: no dark
    fringe from the invisible colour of transparent pixels)."""
    h, w = rgba.shape[:2]
    k = max_side / max(h, w)
    if k >= 1.0:
        return rgba
    size = (max(1, round(w * k)), max(1, round(h * k)))
    a = rgba[..., 3:4].astype(np.float32) / 255.0
    premult = cv2.resize(rgba[..., :3].astype(np.float32) * a, size, interpolation=cv2.INTER_AREA)
    alpha = cv2.resize(a[..., 0], size, interpolation=cv2.INTER_AREA)
    rgb = premult / np.maximum(alpha, 1e-4)[..., None]
    out = np.dstack([np.clip(rgb, 0, 255), np.clip(alpha * 255.0, 0, 255)]) + 0.5
    return np.ascontiguousarray(out, dtype=np.uint8)


def _unit(dx: float, dy: float) -> tuple[float, float]:
    n = math.hypot(dx, dy)
    return (dx / n, dy / n) if n > 1e-6 else (0.0, 1.0)


def hand_is_free(landmarks: Mapping[str, Point], body: Body, hand: Hand) -> bool:
    """Whether a hand can hold something: its wrist is in the picture and away from the
    body's sides (a hand in a pocket or on a hip rests within the hips' width)."""
    wrist = landmarks.get(f"{hand}_wrist")
    if wrist is None:
        return False
    (lx, _), (rx, _) = body["left_hip"], body["right_hip"]
    centre = (lx + rx) / 2
    resting = abs(lx - rx) / 2 + 0.3 * body.shoulder_width
    below_chest = wrist[1] > body.shoulder_mid[1] + 0.6 * body.unit
    return not (below_chest and abs(wrist[0] - centre) < resting)


def free_hands(landmarks: Mapping[str, Point], body: Body) -> list[Hand]:
    """The hands that can hold something, the one farther from the body first."""
    cx = body.shoulder_mid[0]
    hands: list[Hand] = [h for h in ("left", "right") if hand_is_free(landmarks, body, h)]
    return sorted(hands, key=lambda h: -abs(landmarks[f"{h}_wrist"][0] - cx))


def image_side(body: Body, hand: Hand) -> float:
    """Which side of the image the subject's ``hand`` side is: 1 the image's right (the
    subject's left, facing the camera), -1 its left; swapped for a person seen from behind."""
    side = 1.0 if hand == "left" else -1.0
    if body.has("left_shoulder", "right_shoulder"):
        ls, rs = body["left_shoulder"], body["right_shoulder"]
        if ls[0] < rs[0]:
            side = -side
    return side


def open_hand(body: Body, hand: Hand, cut: tuple[bool, bool]) -> Hand:
    """``hand``, or the other one when the image side it stands for is cut by the photo's
    edge (the person runs off that edge: nothing placed beside them there can be seen) and
    the other side is not. ``cut``: the person runs off the image's (left, right) edge."""
    left_cut, right_cut = cut
    blocked = left_cut if image_side(body, hand) < 0 else right_cut
    other: Hand = "right" if hand == "left" else "left"
    free = not (left_cut if image_side(body, other) < 0 else right_cut)
    return other if blocked and free else hand


def _fit(rgba: ImageArray, long_side: float) -> tuple[float, float]:
    h, w = rgba.shape[:2]
    k = long_side / max(h, w)
    return w * k, h * k


def place_product(
    figure: Figure, rgba: ImageArray, category: str, placement: Placement, hand: Hand
) -> Prop:
    """The product's box for ``placement`` next to ``figure`` (working pixels). A placement
    the picture cannot show falls back: a hand the image does not show to the other hand,
    no hand at all to standing in front beside the body; the floor without visible feet also
    to the front."""
    rule = rule_for(category)
    body = figure.body
    u = body.unit
    lm = figure.landmarks
    if placement == "held" and f"{hand}_wrist" not in lm:
        placement = "front"
    if placement == "floor" and not figure.feet_visible:
        placement = "front"
    size = size_for(rule, placement) * u
    side = image_side(body, hand)
    if placement == "held":
        wrist = lm[f"{hand}_wrist"]
        elbow = lm.get(f"{hand}_elbow")
        if elbow is not None:
            forearm = math.hypot(wrist[0] - elbow[0], wrist[1] - elbow[1])
            d = _unit(wrist[0] - elbow[0], wrist[1] - elbow[1])
        else:
            forearm, d = 0.6 * u, (0.0, 1.0)
        hand_len = max(0.08 * u, min(0.45 * forearm, 0.3 * u))
        palm = (wrist[0] + 0.5 * hand_len * d[0], wrist[1] + 0.5 * hand_len * d[1])
        w, h = _fit(rgba, size)
        grip: Grip | None = Grip(wrist, palm, hand_len)
        if max(w, h) < 1.6 * hand_len:
            # Too small to wrap a hand around: held at the fingertips, in front of them.
            tip = (wrist[0] + 1.1 * hand_len * d[0], wrist[1] + 1.1 * hand_len * d[1])
            return Prop(rgba, (tip[0] - w / 2, tip[1] - h / 2, w, h), "held", hand, None)
        if rule.grasp == "top":
            box = (palm[0] - w / 2, palm[1] - 0.12 * h, w, h)
        else:
            box = (palm[0] - w / 2, palm[1] - 0.45 * h, w, h)
        return Prop(rgba, box, "held", hand, grip)
    if placement == "worn":
        # Hung from the neck: the top of the piece (a necklace's chain) at the neck's base.
        w, h = _fit(rgba, size)
        cx, cy = body.shoulder_mid
        dx, dy = body.down
        neck = (cx - 0.1 * u * dx, cy - 0.1 * u * dy)
        return Prop(rgba, (neck[0] - w / 2, neck[1], w, h), "worn", None, None)
    x0, _, x1, y1 = figure.extent()
    if placement == "hip":
        w, h = _fit(rgba, size)
        hip = body[f"{hand}_hip"]
        cx = hip[0] + side * 0.55 * body.shoulder_width
        # Carried on a strap from the same shoulder (its top, a little inwards).
        sx, sy = body[f"{hand}_shoulder"]
        strap = (sx - side * 0.12 * body.shoulder_width, sy - 0.08 * body.shoulder_width)
        return Prop(rgba, (cx - w / 2, hip[1] - 0.2 * u, w, h), "hip", hand, None, strap)
    if placement == "floor":
        ih, iw = rgba.shape[:2]
        h = size
        w = h * iw / ih
        if w > FLOOR_MAX_WIDTH * u:
            w, h = FLOOR_MAX_WIDTH * u, FLOOR_MAX_WIDTH * u * ih / iw
        gap = 0.12 * u
        x = x1 + gap if side > 0 else x0 - gap - w
        return Prop(rgba, (x, y1 - h, w, h), "floor", hand, None)
    # In the foreground beside the body, standing on the lower edge of the half-body frame.
    w, h = _fit(rgba, size * FRONT_SCALE)
    cx = body.shoulder_mid[0] + side * (0.55 * body.shoulder_width + 0.4 * w)
    bottom = min(float(y1), body.hip_mid[1] + 0.5 * u)
    return Prop(rgba, (cx - w / 2, bottom - h, w, h), "front", hand, None)
