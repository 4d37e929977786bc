"""Staging a person (and a product) on a painted scene: which scenes suit people, framing the
person full body or half body on a 3:4 canvas, and compositing person, product, shadows and
light with the scenes capability's helpers.

Geometry is worked out on the avatar's working image ("working pixels") and mapped to the
canvas by one scale and offset (:class:`Frame`); images are resized once, straight from their
source pixels to the canvas (premultiplied, area filter when shrinking), so nothing is
resampled twice.

Scenes come from the scenes capability's catalogue (:data:`SCENES`): the ones a standing
person fits (studio sweeps, gradients, outdoor views, rooms) and three table scenes where the
person stands behind the counter, which hides them from the hips down (:data:`COUNTER_SCENES`).
Flat lays and the shelf are product-only views and are not used.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.categories import normalise_category
from pixelmill.engines.base import ImageArray
from pixelmill.engines.product_photo.person import Body
from pixelmill.engines.product_photo.prompt import Framing, Hand, Placement, PromptReading
from pixelmill.engines.runtime import layers
from pixelmill.engines.runtime.backdrops import Backdrop
from pixelmill.engines.runtime.layers import (
    Layer,
    coverage,
    harmonise,
    layer_from_cutout,
    paste,
    to_uint8,
)
from pixelmill.engines.runtime.person import Mask, Point
from pixelmill.engines.runtime.scenery import SCENES
from pixelmill.engines.runtime.shadows import add_floor_shadow, shadow_on

Rgb = npt.NDArray[np.float32]

STANDING_SCENES: tuple[str, ...] = (
    "white studio sweep", "light grey studio sweep", "pastel studio sweep", "dark studio sweep",
    "black gloss surface", "colour gradient", "soft light backdrop", "concrete surface",
    "sunny sky", "sunset sky", "beach sand", "city lights bokeh", "garden bokeh", "living room",
    "loft interior",
)  # fmt: skip
"""Scenes a standing person fits into: a wall or sky behind, a floor to stand on."""

COUNTER_SCENES: tuple[str, ...] = ("kitchen counter", "marble countertop", "wooden table")
"""Table scenes: the person stands behind the counter, which hides them from the hips down."""

PEOPLE_SCENES = STANDING_SCENES + COUNTER_SCENES

STUDIO_SCENES: tuple[str, ...] = (
    "white studio sweep", "light grey studio sweep", "pastel studio sweep", "soft light backdrop",
    "colour gradient", "dark studio sweep",
)  # fmt: skip
"""Plain studio backdrops, the try-on's default variants."""

CATEGORY_SCENES: dict[str, tuple[str, ...]] = {
    "clothing": ("white studio sweep", "light grey studio sweep", "concrete surface",
                 "loft interior", "city lights bokeh", "pastel studio sweep", "garden bokeh"),
    "jewelry": ("soft light backdrop", "dark studio sweep", "pastel studio sweep",
                "black gloss surface", "living room", "colour gradient"),
    "accessories": ("white studio sweep", "city lights bokeh", "concrete surface", "sunny sky",
                    "pastel studio sweep", "loft interior"),
    "shoes": ("concrete surface", "city lights bokeh", "white studio sweep", "beach sand",
              "garden bokeh", "light grey studio sweep"),
    "bags": ("white studio sweep", "city lights bokeh", "concrete surface", "loft interior",
             "pastel studio sweep", "sunset sky"),
    "electronics": ("dark studio sweep", "loft interior", "black gloss surface",
                    "city lights bokeh", "white studio sweep", "colour gradient"),
    "food": ("kitchen counter", "wooden table", "garden bokeh", "sunny sky", "living room",
             "marble countertop"),
    "beauty": ("soft light backdrop", "pastel studio sweep", "marble countertop",
               "colour gradient", "white studio sweep", "black gloss surface"),
    "home": ("living room", "loft interior", "white studio sweep", "light grey studio sweep",
             "concrete surface", "garden bokeh"),
    "houseware": ("kitchen counter", "living room", "wooden table", "marble countertop",
                  "white studio sweep", "loft interior"),
    "furniture": ("living room", "loft interior", "white studio sweep",
                  "light grey studio sweep", "concrete surface"),
    "other": ("white studio sweep", "living room", "garden bokeh", "sunset sky",
              "city lights bokeh", "light grey studio sweep"),
}  # fmt: skip
"""People scenes that suit each product category, most suitable first."""


def _rng(seed: int, *salt: int) -> np.random.Generator:
    return np.random.default_rng([seed & 0xFFFFFFFF, *salt])


def choose_people_scenes(
    category: str,
    wished: tuple[str, ...],
    n: int,
    seed: int,
    pool: tuple[str, ...] = (),
    fill: tuple[str, ...] = PEOPLE_SCENES,
) -> list[str]:
    """``n`` scene names: the prompt's scenes (``wished``, in order, repeated when there are
    fewer than ``n``: the outputs then differ by framing, placement and painting); otherwise
    ``pool`` or the category's scenes (the first always first, the rest in a seed-dependent
    order) followed by the ``fill`` scenes in a seed-dependent order. The list for ``n``
    starts with the list for any smaller ``n``."""
    usable = tuple(s for s in wished if s in PEOPLE_SCENES)
    if usable:
        return [usable[i % len(usable)] for i in range(n)]
    cat = normalise_category(category)
    hero, *liked = pool or CATEGORY_SCENES[cat]
    rng = _rng(seed, zlib.crc32(cat.encode()))
    others = [s for s in fill if s != hero and s not in liked]
    order = [hero, *(liked[i] for i in rng.permutation(len(liked)))]
    order += [others[i] for i in rng.permutation(len(others))]
    return [order[i % len(order)] for i in range(n)]


# --- the person and the product, in working pixels -------------------------------------------


@dataclass(frozen=True)
class Figure:
    """A cut-out person ready to stage: premultiplied colour and alpha on the working image,
    the completed body, and the landmarks the image really shows."""

    premult: Rgb
    alpha: Mask
    body: Body
    landmarks: Mapping[str, Point]

    @property
    def size(self) -> tuple[int, int]:
        return int(self.alpha.shape[0]), int(self.alpha.shape[1])

    def extent(self) -> tuple[int, int, int, int]:
        """``(x0, y0, x1, y1)`` of the solid person (alpha > 0.5), end-exclusive."""
        solid = self.alpha > 0.5
        rows = np.flatnonzero(solid.any(axis=1))
        cols = np.flatnonzero(solid.any(axis=0))
        if rows.size == 0:
            h, w = self.size
            return 0, 0, w, h
        return int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1

    def touches(self) -> tuple[bool, bool, bool]:
        """Whether the person runs off the image's left, right and bottom edges (a photo
        cropped at the waist): those edges must then lie on or beyond the frame."""
        h, w = self.size
        m = max(1, min(h, w) // 100)
        a = self.alpha
        return (
            bool(a[:, :m].max(initial=0.0) > 0.5),
            bool(a[:, w - m :].max(initial=0.0) > 0.5),
            bool(a[h - m :].max(initial=0.0) > 0.5),
        )

    @property
    def feet_visible(self) -> bool:
        """Whether the whole body down to the soles is in the picture."""
        return (
            "left_ankle" in self.landmarks or "right_ankle" in self.landmarks
        ) and not self.touches()[2]


@dataclass(frozen=True)
class Grip:
    """A hand holding the product: drawn again over it, so the fingers are in front."""

    wrist: Point
    palm: Point
    length: float


@dataclass(frozen=True)
class Prop:
    """The product cut-out (RGBA, cropped) and its box ``(x, y, w, h)`` in working pixels."""

    rgba: ImageArray
    box: tuple[float, float, float, float]
    placement: Placement
    hand: Hand | None = None
    grip: Grip | None = None
    strap: Point | None = None
    """Where a bag's strap goes up to (the top of a shoulder), for a bag at the hip."""


# --- framing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    """Working pixels -> canvas pixels: ``canvas = s · p + (ox, oy)``."""

    s: float
    ox: float
    oy: float

    def point(self, p: Point) -> Point:
        return self.ox + self.s * p[0], self.oy + self.s * p[1]

    def box(self, b: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
        x, y, w, h = b
        return (
            round(self.ox + self.s * x),
            round(self.oy + self.s * y),
            max(1, round(self.s * w)),
            max(1, round(self.s * h)),
        )


TOP = 0.07
"""Head room: the top of the head sits this far (fraction of the height) below the top."""
FLOOR = 0.92
"""Full-body framing: the soles stand on this line (fraction of the height)."""
COUNTER_TOP = 0.64
"""Counter scenes: where the counter's edge (the painted horizon) runs."""
SIDE_MARGIN = 0.05


def frame_for(
    figure: Figure, prop: Prop | None, framing: Framing, counter: bool, h: int, w: int
) -> Frame:
    """Where the person goes on an ``h`` × ``w`` canvas: full body (head to soles), half body
    (head to below the hips, the hand and product included) or, on a counter scene, with the
    hips just below the counter's edge; the person and the product centred together, never
    wider than the canvas; a photo edge the person runs off on or beyond the frame."""
    x0, y0, x1, y1 = figure.extent()
    body = figure.body
    ih, iw = figure.size
    hip_y = body.hip_mid[1]
    u = body.unit
    left_cut, right_cut, bottom_cut = figure.touches()
    if counter:
        bottom = hip_y
        target = (COUNTER_TOP + 0.02) * h
    elif framing == "full" and figure.feet_visible:
        bottom, target = float(y1), FLOOR * h
    else:
        bottom = hip_y + 0.5 * u
        if prop is not None and prop.placement != "floor":
            bottom = max(bottom, prop.box[1] + prop.box[3] + 0.08 * u)
        for side in ("left_wrist", "right_wrist"):
            if side in figure.landmarks:
                bottom = max(bottom, figure.landmarks[side][1] + 0.25 * u)
        bottom = min(bottom, float(y1))
        target = float(h)
    s = (target - TOP * h) / max(1.0, bottom - y0)
    # Horizontal extent: the person's rows that are shown, and the product.
    rows = figure.alpha[int(y0) : max(int(y0) + 1, math.ceil(bottom))] > 0.5
    cols = np.flatnonzero(rows.any(axis=0))
    cx0, cx1 = (float(cols[0]), float(cols[-1] + 1)) if cols.size else (float(x0), float(x1))
    if prop is not None:
        px, _, pw, _ = prop.box
        cx0, cx1 = min(cx0, px), max(cx1, px + pw)
    s = min(s, (1.0 - 2 * SIDE_MARGIN) * w / max(1.0, cx1 - cx0))
    ox = w / 2 - s * (cx0 + cx1) / 2
    if counter or (framing == "full" and figure.feet_visible):
        oy = target - s * bottom
    else:
        oy = TOP * h - s * y0
        # A person cut by the frame's bottom must reach it (a narrow canvas can shrink them).
        oy = max(oy, h - s * bottom)
    if left_cut:
        ox = min(ox, 0.0)
    if right_cut:
        ox = max(ox, w - s * iw)
    if bottom_cut:
        oy = max(oy, h - s * ih)
    return Frame(s, ox, oy)


# --- compositing -----------------------------------------------------------------------------


def place_layer(premult: Rgb, alpha: Mask, frame: Frame, h: int, w: int) -> Layer:
    """A working-image layer mapped onto the canvas (the kit's placement, one source pixel of
    context kept around the crop)."""
    return layers.place_layer(premult, alpha, frame.s, (frame.ox, frame.oy), (h, w), margin=1)


def draw_strap(canvas: Rgb, bag: Layer, shoulder: Point) -> None:
    """A bag's shoulder strap: a line from the top of the bag to the shoulder, in the bag's
    darkest colour (its trim), as wide as 1.2 % of the canvas height, anti-aliased."""
    a = bag.alpha
    solid = a > 0.9
    if not solid.any():
        return
    colour = bag.premult[solid] / a[solid][:, None]
    lum = colour @ np.asarray((0.2126, 0.7152, 0.0722), np.float32)
    trim = colour[lum <= np.quantile(lum, 0.15)].mean(axis=0)
    rows = np.flatnonzero(solid.any(axis=1))
    top = int(rows[0])
    cols = np.flatnonzero(solid[top])
    start = (bag.x + float(cols.mean()), bag.y + top + 1.0)
    h = canvas.shape[0]
    width = max(2, round(0.012 * h))
    mask = np.zeros(canvas.shape[:2], np.float32)
    shift = 2
    p0 = (round(start[0] * (1 << shift)), round(start[1] * (1 << shift)))
    p1 = (round(shoulder[0] * (1 << shift)), round(shoulder[1] * (1 << shift)))
    cv2.line(mask, p0, p1, 1.0, width, cv2.LINE_AA, shift)
    canvas *= (1.0 - mask)[..., None]
    canvas += mask[..., None] * trim.astype(np.float32)


def paint_scene(name: str, seed: int, position: int, h: int, w: int, horizon: float) -> Backdrop:
    """Scene ``name`` painted at ``h`` × ``w`` with the floor line at ``horizon``; the painting
    depends on the seed, the scene and the output position (so repeated scenes differ)."""
    spec = SCENES[name]
    rng = _rng(seed, zlib.crc32(name.encode()), position)
    color = spec.colors[int(rng.integers(len(spec.colors)))] if spec.colors else None
    return spec.painter(h, w, rng, horizon=horizon, color=color)


def hand_layer(figure: Figure, grip: Grip) -> tuple[Rgb, Mask]:
    """The holding hand cut from the person (working pixels): their pixels within reach of the
    palm and past the wrist."""
    ih, iw = figure.size
    r = grip.length * 0.75
    x0, x1 = max(0, int(grip.palm[0] - r) - 1), min(iw, int(grip.palm[0] + r) + 2)
    y0, y1 = max(0, int(grip.palm[1] - r) - 1), min(ih, int(grip.palm[1] + r) + 2)
    mask = np.zeros((ih, iw), np.float32)
    if x1 <= x0 or y1 <= y0:
        return figure.premult * 0.0, mask
    yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    d = np.hypot(xx - grip.palm[0], yy - grip.palm[1])
    dx, dy = grip.palm[0] - grip.wrist[0], grip.palm[1] - grip.wrist[1]
    n = max(1e-6, math.hypot(dx, dy))
    along = ((xx - grip.wrist[0]) * dx + (yy - grip.wrist[1]) * dy) / n
    near = np.clip((r - d) / (0.15 * r), 0.0, 1.0) * np.clip(along / (0.15 * r) + 0.5, 0.0, 1.0)
    mask[y0:y1, x0:x1] = near * figure.alpha[y0:y1, x0:x1]
    premult = figure.premult * (mask / np.maximum(figure.alpha, 1e-6))[..., None]
    return premult.astype(np.float32), mask


def prop_on_canvas(
    frame: Frame, prop: Prop, counter: bool, h: int, w: int
) -> tuple[tuple[int, int, int, int], Placement]:
    """Where :func:`stage` draws the product on the canvas (``x, y, w, h``) and how it is
    placed there: its box through the frame, or, on a counter scene, standing on the counter
    (hands and the floor are behind it), in front of the person's near hand."""
    box = frame.box(prop.box)
    if not (counter and prop.placement in ("held", "hip", "front", "floor")):
        return box, prop.placement
    top = COUNTER_TOP * h
    base = top + 0.4 * (h - top)
    bw, bh = box[2], box[3]
    if bh > 0.8 * (base - TOP * h):
        k = 0.8 * (base - TOP * h) / bh
        bw, bh = max(1, round(bw * k)), max(1, round(bh * k))
    cx = box[0] + box[2] / 2
    cx = min(max(cx, bw / 2 + SIDE_MARGIN * w), w - bw / 2 - SIDE_MARGIN * w)
    return (round(cx - bw / 2), round(base - bh), bw, bh), "counter"


@dataclass(frozen=True)
class Staged:
    """A rendered canvas and where things went (canvas pixels)."""

    pixels: ImageArray
    frame: Frame
    prop_box: tuple[int, int, int, int] | None
    placement: Placement | None


def stage(
    figure: Figure,
    prop: Prop | None,
    scene: str,
    framing: Framing,
    seed: int,
    position: int,
    h: int,
    w: int,
) -> Staged:
    """Compose one output: the scene, the person (harmonised with its light, with a floor
    shadow when their feet stand in the frame), and the product: on the floor beside them,
    on the counter in front of them, or held / worn / at the hip in front of the body with a
    soft shadow on it and the holding hand drawn over it."""
    counter = scene in COUNTER_SCENES
    frame = frame_for(figure, prop, framing, counter, h, w)
    horizon = COUNTER_TOP if counter else SCENES[scene].horizon
    backdrop = paint_scene(scene, seed, position, h, w, horizon)
    canvas = backdrop.rgb.copy()
    person = harmonise(
        place_layer(figure.premult, figure.alpha, frame, h, w), backdrop.rgb, backdrop.light, 0.12
    )
    standing = not counter and framing == "full" and figure.feet_visible
    if standing:
        add_floor_shadow(canvas, person, 0.85)

    placement = prop.placement if prop is not None else None
    prop_layer: Layer | None = None
    prop_box: tuple[int, int, int, int] | None = None
    if prop is not None:
        box, placement = prop_on_canvas(frame, prop, counter, h, w)
        prop_box = box
        prop_layer = harmonise(layer_from_cutout(prop.rgba, box), backdrop.rgb, backdrop.light, 0.1)
        if placement == "floor":
            add_floor_shadow(canvas, prop_layer, 0.9)
            paste(canvas, prop_layer)
            prop_layer = None

    paste(canvas, person)
    if counter:
        top_row = round(COUNTER_TOP * h)
        canvas[top_row:] = backdrop.rgb[top_row:]
    if prop is not None and prop_layer is not None:
        if placement == "counter":
            add_floor_shadow(canvas, prop_layer, 0.9)
        else:
            shadow_on(canvas, prop_layer, coverage((h, w), person), 0.35)
        if prop.strap is not None and placement == "hip":
            draw_strap(canvas, prop_layer, frame.point(prop.strap))
        paste(canvas, prop_layer)
        if prop.grip is not None and placement == "held":
            hand_premult, hand_alpha = hand_layer(figure, prop.grip)
            hand = harmonise(
                place_layer(hand_premult, hand_alpha, frame, h, w),
                backdrop.rgb,
                backdrop.light,
                0.12,
            )
            paste(canvas, hand)
    pixels = to_uint8(canvas, _rng(seed, 7, position))
    return Staged(pixels, frame, prop_box, placement)


def landmarks_on_canvas(
    landmarks: Mapping[str, Point], frame: Frame, h: int, w: int
) -> dict[str, list[float]]:
    """The landmarks that fall inside the canvas, in canvas pixels."""
    out: dict[str, list[float]] = {}
    for name, p in landmarks.items():
        x, y = frame.point(p)
        if 0.0 <= x < w and 0.0 <= y < h:
            out[name] = [round(x, 2), round(y, 2)]
    return out


def output_data(
    staged: Staged, figure: Figure, reading: PromptReading, extra: Mapping[str, Any]
) -> dict[str, Any]:
    """JSON-safe facts about one output: ``extra``, the prompt's keywords and the words not
    used, landmarks on the canvas, the product's box."""
    h, w = staged.pixels.shape[:2]
    data: dict[str, Any] = dict(extra)
    data["keywords"] = list(reading.keywords)
    data["unrecognised"] = list(reading.unrecognised)
    data["landmarks"] = landmarks_on_canvas(figure.landmarks, staged.frame, h, w)
    if staged.prop_box is not None:
        data["product_box"] = list(staged.prop_box)
    return data
