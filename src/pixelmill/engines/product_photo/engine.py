"""The ``product_photo`` engine: a product shown with a person (an avatar), on painted scenes.

No generative model runs. :meth:`ProductPhotoEngine.plan` does the fail-fast work before
anything is charged: it finds the person in the avatar image (the caller's landmarks, or
MediaPipe pose; no person: :class:`EngineError`), cuts the product out (its own alpha or
U²-Net-p; no product: :class:`EngineError`), reads the prompt and settles every output's
scene, placement, hand and framing. The person's cut-out (MediaPipe mask refined by GrabCut)
is made on the first render and shared by the plan's outputs. Each output is the scene painted
at 3:4, the person framed on it with a floor shadow, the product held at the hand the
landmarks place (the hand drawn over it), worn, at the hip or beside them on the floor, sized
by its category in the body's own unit, with a soft shadow and light harmonisation.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, Field

from pixelmill.categories import normalise_category
from pixelmill.engines.base import (
    EngineError,
    EngineInputs,
    EngineResult,
    ImageArray,
    MultiImageBaseEngine,
    OutputImage,
    PlannedImage,
)
from pixelmill.engines.product_photo.person import (
    Avatar,
    complete_body,
    cut_out,
    find_avatar,
)
from pixelmill.engines.product_photo.placement import (
    crop,
    free_hands,
    image_side,
    open_hand,
    place_product,
    rule_for,
)
from pixelmill.engines.product_photo.prompt import (
    Framing,
    Hand,
    Placement,
    PromptReading,
    read_prompt,
)
from pixelmill.engines.product_photo.staging import (
    COUNTER_SCENES,
    COUNTER_TOP,
    STANDING_SCENES,
    Figure,
    Prop,
    choose_people_scenes,
    frame_for,
    output_data,
    prop_on_canvas,
    stage,
)
from pixelmill.engines.runtime.layers import decontaminate_image, prepare_cutout
from pixelmill.engines.runtime.lazy import Lazy
from pixelmill.engines.runtime.person import load as load_person_models
from pixelmill.engines.runtime.scenery import CATEGORIES
from pixelmill.engines.runtime.segmentation import U2NETP

METHOD = (
    "no generative model: the person cut out of the avatar image (MediaPipe person mask "
    "refined by GrabCut, guided-filter edges; landmarks {landmarks}), the product cut out "
    "({cutout}) and placed by its category (held at a hand the landmarks place, with the hand "
    "drawn over it; worn at the neck; at the hip; on the floor beside the person; on the "
    "counter in table scenes), sized in the body's torso length, composited on procedural "
    "scenes chosen from the prompt's keywords and the category, with floor and contact "
    "shadows and light harmonisation"
)

NO_PRODUCT_IMAGE = "a product image is needed (inputs.extra['product'])"


def _category_field() -> Any:
    return Field(
        "other",
        description="the product's library category, picks placement, size and scenes: "
        + ", ".join(CATEGORIES),
    )


class ProductPhotoParams(BaseModel):
    """Options for ``product_photo``."""

    num_outputs: int = Field(6, ge=1, le=30, description="how many images (1-30)")
    prompt: str | None = Field(
        None,
        max_length=2000,
        description=(
            "scene and shot wishes in plain words: places (studio, beach, office, kitchen, "
            "outdoor, city, garden, living room, ...), framing (full body, half body), "
            "holding / beside / wearing, left or right hand; other words are listed in "
            "details.unrecognised"
        ),
    )
    category: str = _category_field()
    seed: int = Field(0, ge=0, le=2**32 - 1, description="varies scenes, order and painting")
    size: int = Field(1024, ge=256, le=2048, description="output height in pixels (width 3/4)")
    landmarks: dict[str, list[float]] | None = Field(
        None,
        description=(
            "the avatar's body landmarks in its image's pixels (nose, left/right shoulder, "
            "elbow, wrist, hip, knee, ankle), as the avatar engines return them; found with "
            "MediaPipe pose when omitted"
        ),
    )


@dataclass(frozen=True)
class Shot:
    """One planned output."""

    position: int
    scene: str
    placement: Placement
    hand: Hand
    framing: Framing

    @property
    def label(self) -> str:
        where = {
            "held": f"in the {self.hand} hand",
            "worn": "worn",
            "hip": f"at the {self.hand} hip",
            "floor": "beside the person",
            "front": "in front",
            "counter": "on the counter",
        }[self.placement]
        return f"{self.scene}, {where}"


def feet_in_picture(avatar: Avatar) -> bool:
    """Whether the avatar shows the feet: an ankle seen and the person mask clear of the
    image's bottom edge."""
    h = avatar.size[0]
    ankles = "left_ankle" in avatar.landmarks or "right_ankle" in avatar.landmarks
    bottom = avatar.prior[h - max(1, h // 100) :]
    return ankles and not bool(bottom.max(initial=0.0) > 0.5)


def edges_cut(avatar: Avatar) -> tuple[bool, bool]:
    """Whether the person runs off the avatar image's left and right edges (a portrait cut
    at the arm): the frame keeps such an edge on or beyond its own, so nothing placed beside
    the person on that side would be seen."""
    h, w = avatar.size
    m = max(1, min(h, w) // 100)
    prior = avatar.prior
    return bool(prior[:, :m].max(initial=0.0) > 0.5), bool(prior[:, w - m :].max(initial=0.0) > 0.5)


def hips_in_picture(avatar: Avatar) -> bool:
    """Whether both hips are seen inside the avatar image (a half-body portrait's hips are
    only estimated, below its bottom edge: nothing can hang there)."""
    h = avatar.size[0]
    hips = [avatar.landmarks.get(n) for n in ("left_hip", "right_hip")]
    return all(p is not None and p[1] < 0.97 * h for p in hips)


def plan_shots(
    avatar: Avatar, reading: PromptReading, category: str, n: int, seed: int
) -> list[Shot]:
    """Every output's scene, placement, hand and framing.

    Placements cycle through the category's (or follow the prompt's wish); a held product
    goes to a free hand (not resting on a hip or in a pocket; the prompt's hand first, else
    alternating, the more outstretched first), with no free hand a bag goes to the hip and
    anything else stands in the foreground; the floor needs the feet in the picture, the hip
    the hips; a product beside the person goes to a side the photo does not cut. Framings
    alternate full / half body (half first for small products; full body only when the feet
    are in the picture; floor placements always full, foreground ones always half). Table
    scenes put the product on the counter unless the hand holding it is above the counter."""
    rule = rule_for(category)
    body = complete_body(avatar.landmarks)
    cut = edges_cut(avatar)
    hips = hips_in_picture(avatar)
    free = free_hands(avatar.landmarks, body)
    if reading.hand in free:
        free = [reading.hand, *[h for h in free if h != reading.hand]]
    feet = feet_in_picture(avatar)
    scenes = choose_people_scenes(category, reading.scenes, n, seed)
    small = min(rule.sizes.values()) < 0.6
    sides: tuple[Hand, Hand] = ("right", "left")
    shots = []
    for i, scene in enumerate(scenes):
        placement: Placement = reading.placement or rule.placements[i % len(rule.placements)]
        turn = i // len(rule.placements) if reading.placement is None else i
        hand: Hand = sides[turn % 2] if reading.hand is None else reading.hand
        if placement == "held":
            if free:
                hand = free[0] if reading.hand else free[turn % len(free)]
            else:
                placement = "hip" if "hip" in rule.sizes else "front"
        if placement == "floor" and not feet:
            placement = "front"
        if placement == "hip" and not hips:
            placement = "front"
        if placement in ("front", "hip", "floor"):
            hand = open_hand(body, hand, cut)
        if placement == "front" or (reading.framing == "half") or not feet:
            framing: Framing = "half"
        elif placement == "floor" or reading.framing == "full":
            framing = "full"
        else:
            framing = ("half", "full")[(i + (0 if small else 1)) % 2]
        if scene in COUNTER_SCENES and placement != "worn":
            wrist = avatar.landmarks.get(f"{hand}_wrist")
            above = wrist is not None and wrist[1] < body.hip_mid[1] - 0.1 * body.unit
            if not (placement == "held" and above):
                placement = "counter"
        shots.append(Shot(i, scene, placement, hand, framing))
    return shots


def make_figure(avatar: Avatar) -> Figure:
    """The person cut out of the avatar image, edge colours decontaminated."""
    alpha = cut_out(avatar)
    rgb = decontaminate_image(avatar.rgb, alpha).astype(np.float32) / 255.0
    premult = np.ascontiguousarray(rgb * alpha[..., None], dtype=np.float32)
    return Figure(premult, alpha, complete_body(avatar.landmarks), avatar.landmarks)


MIN_PRODUCT_IN_FRAME = 0.9
"""A product photo whose product shows less than this share of itself inside the frame is
tried again another way (:func:`tries`), then not delivered (a seller's product must be seen
whole)."""

MAX_TRIES = 3
"""Placements an output tries (the planned one first) before it fails."""

DELIVERED_AS = "delivered_as"
"""``OutputImage.data`` key naming what an output that was tried again delivered (its
scene and placement) when that differs from its planned label; the job runner records it."""


def in_frame(box: tuple[int, int, int, int] | None, h: int, w: int) -> float:
    """The share of ``box`` (x, y, width, height) inside an ``h`` × ``w`` frame (1 for none)."""
    if box is None:
        return 1.0
    x, y, bw, bh = box
    inside_w = max(0, min(x + bw, w) - max(x, 0))
    inside_h = max(0, min(y + bh, h) - max(y, 0))
    return inside_w * inside_h / max(1, bw * bh)


def tries(shot: Shot) -> list[Shot]:
    """The ways an output is tried, at most :data:`MAX_TRIES`, in order and the same for
    the same shot (no randomness: a resumed job renders the same image): as planned; the
    same placement on the other side (a worn product, which has none: in front of the
    person); then another scene: a table scene (the product stands on the counter, inside
    the frame) for a standing one, a standing scene with the product in front for a table
    one."""
    other: Hand = "right" if shot.hand == "left" else "left"
    out = [shot]
    if shot.placement == "worn":  # a necklace hanging below a portrait's bottom edge
        out.append(replace(shot, placement="front", framing="half"))
    elif shot.placement != "counter":
        out.append(replace(shot, hand=other))
    if shot.scene in COUNTER_SCENES:
        scene = STANDING_SCENES[shot.position % len(STANDING_SCENES)]
    else:  # the product in front of the person is moved onto the counter
        scene = COUNTER_SCENES[shot.position % len(COUNTER_SCENES)]
    out.append(replace(shot, scene=scene, placement="front", framing="half"))
    unique: list[Shot] = []
    for t in out:
        if t not in unique:
            unique.append(t)
    return unique[:MAX_TRIES]


def as_staged(shot: Shot) -> Shot:
    """``shot`` as :func:`stage` shows it: on a table scene a product the person holds, carries
    or stands beside them is stood on the counter (hands and the floor are behind it)."""
    moved = shot.scene in COUNTER_SCENES and shot.placement in ("held", "hip", "front", "floor")
    return replace(shot, placement="counter") if moved else shot


def _prop(person: Figure, product: ImageArray, category: str, shot: Shot) -> Prop:
    placement: Placement = "held" if shot.placement == "counter" else shot.placement
    prop = place_product(person, product, category, placement, shot.hand)
    if shot.placement == "counter":
        prop = replace(prop, placement="counter", grip=None)
    return prop


def _shown(person: Figure, prop: Prop, shot: Shot, framing: Framing, h: int, w: int) -> float:
    """The share of the product :func:`stage` would show inside the frame (its geometry
    only: nothing is painted); 0 on a table scene that would hide the person behind the
    counter (their shoulders below its edge: a head-and-shoulders portrait must reach the
    frame's bottom, which the counter covers)."""
    counter = shot.scene in COUNTER_SCENES
    frame = frame_for(person, prop, framing, counter, h, w)
    if counter and frame.point(person.body.shoulder_mid)[1] > COUNTER_TOP * h:
        return 0.0
    return in_frame(prop_on_canvas(frame, prop, counter, h, w)[0], h, w)


def render_shot(
    figure: Lazy[Figure],
    product: ImageArray,
    category: str,
    shot: Shot,
    reading: PromptReading,
    seed: int,
    height: int,
) -> OutputImage:
    """Render one planned output: ``height`` × ``3/4·height`` RGB. When the product would be
    cut off by the frame the output is tried again another way (:func:`tries`; each also
    with the whole figure in the frame when the feet are in the picture), and fails with the
    placements tried and the most of the product any of them showed."""
    person = figure.get()
    w = round(height * 3 / 4)
    best = 0.0
    tried = tries(shot)
    if shot.placement == "worn":  # in front instead: on a side the photo does not cut
        cut = person.touches()[:2]
        tried = [
            replace(t, hand=open_hand(person.body, t.hand, cut)) if t.placement == "front" else t
            for t in tried
        ]
    for number, attempt in enumerate(tried, 1):
        prop = _prop(person, product, category, attempt)
        framings: list[Framing] = [attempt.framing]
        if attempt.framing != "full" and person.feet_visible:
            framings.append("full")  # the whole figure brings a cut-off product back in
        for framing in framings:
            shown = _shown(person, prop, attempt, framing, height, w)
            best = max(best, shown)
            if shown >= MIN_PRODUCT_IN_FRAME:
                facts = {"tries": number}
                return _render(person, prop, attempt, framing, shot, reading, seed, height, facts)
    ways = "; ".join(described(as_staged(t), person) for t in tried)
    raise EngineError(
        f"the product would be cut off by the frame (or the person hidden behind a counter) in "
        f"each of the {len(tried)} placements tried ({ways}): at most {best:.0%} of it showed; "
        "this output is not delivered"
    )


def described(shot: Shot, person: Figure) -> str:
    """``shot``'s label, with the side of the picture for a product beside the person (the
    label leaves it out: the hand names it for a held product)."""
    if shot.placement not in ("front", "hip", "floor"):
        return shot.label
    side = "right" if image_side(person.body, shot.hand) > 0 else "left"
    return f"{shot.label}, on the picture's {side}"


def _render(
    person: Figure,
    prop: Prop,
    attempt: Shot,
    framing: Framing,
    planned: Shot,
    reading: PromptReading,
    seed: int,
    h: int,
    more: dict[str, Any],
) -> OutputImage:
    w = round(h * 3 / 4)
    staged = stage(person, prop, attempt.scene, framing, seed, attempt.position, h, w)
    delivered = replace(attempt, placement=staged.placement or attempt.placement)
    facts: dict[str, Any] = {
        "scene": attempt.scene,
        "placement": staged.placement,
        "hand": attempt.hand if staged.placement in ("held", "hip") else None,
        "framing": framing,
        **more,
    }
    if delivered.label != planned.label:
        facts[DELIVERED_AS] = delivered.label
    data = output_data(staged, person, reading, facts)
    return OutputImage(staged.pixels, label=delivered.label, data=data)


@dataclass(frozen=True)
class _Plan:
    planned: list[PlannedImage]
    shots: list[Shot]
    reading: PromptReading
    cutout_method: str
    landmarks_source: str


class ProductPhotoEngine(MultiImageBaseEngine[ProductPhotoParams]):
    """``product_photo``: ``num_outputs`` photos of a product with a person.

    A :class:`~pixelmill.engines.base.MultiImageEngine`: :meth:`plan` finds the person, cuts
    the product out and settles the shots (raising :class:`EngineError` when there is no
    person or no product); each planned image renders on its own, the person's cut-out shared
    by the plan's outputs."""

    name: ClassVar[str] = "product_photo"
    Params: ClassVar[type[BaseModel]] = ProductPhotoParams
    models = (U2NETP,)

    def _load(self) -> None:
        super()._load()
        load_person_models()

    def _plan(self, inputs: EngineInputs, params: ProductPhotoParams) -> _Plan:
        product_image = inputs.extra.get("product")
        if product_image is None:
            raise EngineError(NO_PRODUCT_IMAGE)
        avatar = find_avatar(inputs.image, params.landmarks)
        complete_body(avatar.landmarks)  # shoulders are needed to place anything
        cutout, how = prepare_cutout(product_image)
        product = crop(cutout)
        reading = read_prompt(params.prompt)
        shots = plan_shots(avatar, reading, params.category, params.num_outputs, params.seed)
        figure: Lazy[Figure] = Lazy(partial(make_figure, avatar))
        planned = [
            PlannedImage(
                position=shot.position,
                label=shot.label,
                render=partial(
                    render_shot,
                    figure,
                    product,
                    params.category,
                    shot,
                    reading,
                    params.seed,
                    params.size,
                ),
            )
            for shot in shots
        ]
        return _Plan(planned, shots, reading, how, avatar.source)

    def _run(self, inputs: EngineInputs, params: ProductPhotoParams) -> EngineResult:
        plan = self._plan(inputs, params)
        images = [p.render() for p in plan.planned]
        landmarks = "given by the caller" if plan.landmarks_source == "given" else "MediaPipe pose"
        details: dict[str, Any] = {
            "method": METHOD.format(landmarks=landmarks, cutout=plan.cutout_method),
            "scenes": [s.scene for s in plan.shots],
            "placements": [img.data.get("placement") for img in images],
            "framings": [s.framing for s in plan.shots],
            "keywords": list(plan.reading.keywords),
            "unrecognised": list(plan.reading.unrecognised),
            "category": normalise_category(params.category),
            "seed": params.seed,
            "width": round(params.size * 3 / 4),
            "height": params.size,
        }
        return EngineResult(images, details)
