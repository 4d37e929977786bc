"""The ``tryon`` engine: a garment from a product photo put on an avatar, shown on studio
backdrops in several framings.

No generative model runs. :meth:`TryOnEngine.plan` refuses a product whose category is not
clothing (also in :meth:`~TryOnEngine.validate`, before anything is charged), finds the person
(no person: :class:`EngineError`), cuts the garment out (its own alpha or U²-Net-p) and reads
its shape (shoulders, neckline, armpits, hem, sleeves; ``garment.py``), and plans the
variants. The fit itself is made on the first render and shared by the variants: the garment
warped onto the body by a thin-plate spline through shoulder, hip and elbow landmarks, the
body's shading carried onto the fabric, the arms drawn back in front (``fit.py``); each variant
then stages the dressed person on a backdrop (the product-photo capability's staging).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

import cv2
import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from pixelmill.categories import Category, normalise_category
from pixelmill.engines.base import (
    EngineError,
    EngineInputs,
    EngineResult,
    ImageArray,
    MultiImageBaseEngine,
    OutputImage,
    PlannedImage,
)
from pixelmill.engines.product_photo import (
    STANDING_SCENES,
    STUDIO_SCENES,
    Avatar,
    Figure,
    Framing,
    PromptReading,
    choose_people_scenes,
    complete_body,
    cut_out,
    feet_in_picture,
    find_avatar,
    load_person_models,
    output_data,
    read_prompt,
    shrink,
    stage,
)
from pixelmill.engines.runtime.layers import alpha_box, decontaminate_image, prepare_cutout
from pixelmill.engines.runtime.lazy import Lazy
from pixelmill.engines.runtime.segmentation import U2NETP
from pixelmill.engines.tryon.fit import (
    SHADE_STRENGTH,
    Placement,
    arm_radius,
    arms_in_front,
    body_shading,
    place_garment,
    warp_garment,
)
from pixelmill.engines.tryon.garment import Garment, read_garment

Mask = npt.NDArray[np.float32]
Bools = npt.NDArray[np.bool_]

METHOD = (
    "no generative model: the garment cut out of the product image ({cutout}), its shoulders, "
    "neckline, armpits, hem and sleeves read from its outline, warped onto the avatar's body "
    "with a thin-plate spline through the shoulder, hip and elbow landmarks ({landmarks}), "
    "the body's shading multiplied onto the fabric (its own colours and print kept), forearms "
    "and hands drawn back in front of it; the person cut out (MediaPipe person mask refined by "
    "GrabCut) and staged on procedural backdrops, {framings}"
)


class TryOnParams(BaseModel):
    """Options for ``tryon``."""

    num_outputs: int = Field(6, ge=1, le=30, description="how many variants (1-30)")
    prompt: str | None = Field(
        None,
        max_length=2000,
        description=(
            "backdrop and framing wishes in plain words (studio, grey, pastel, dark, beach, "
            "city, garden, office, full body, half body, ...); other words are listed in "
            "details.unrecognised"
        ),
    )
    category: str = Field(
        "other", description="the product's library category; try-on needs clothing"
    )
    seed: int = Field(0, ge=0, le=2**32 - 1, description="varies backdrops and their order")
    size: int = Field(1024, ge=256, le=2048, description="output height in pixels (width 3/4)")
    landmarks: dict[str, list[float]] | None = Field(
        None,
        description=(
            "the avatar's body landmarks in its image's pixels (nose, left/right shoulder, "
            "elbow, wrist, hip, knee, ankle), as the avatar engines return them; found with "
            "MediaPipe pose when omitted"
        ),
    )


def check_category(category: str) -> None:
    """Raise :class:`EngineError` unless ``category`` is clothing."""
    if normalise_category(category) != Category.CLOTHING:
        shown = category.strip() or "empty"
        raise EngineError(f"try-on needs a clothing product; this product's category is {shown}")


@dataclass(frozen=True)
class Dressed:
    """The fit: the dressed person ready to stage, the warped garment's alpha and the control
    points (working pixels of the avatar image)."""

    figure: Figure
    garment_alpha: Mask
    placement: Placement


MAX_GARMENT_SIDE = 1024
"""The garment is read and warped at most this large (long side): it covers less than that
on any output, and its outline analysis is per row."""


def prepare_garment(product: ImageArray) -> tuple[Garment, str]:
    """The garment's shape from a product image, and how it was cut out. Holes the cut-out
    leaves inside the garment (a white print on a shirt shot on white reads as background
    to a salient-object mask) are filled: a garment laid flat has no holes."""
    cutout, how = prepare_cutout(product)
    box = alpha_box(cutout[..., 3].astype(np.float32) / 255.0)
    if box is None:
        raise EngineError("no garment found in the product image")
    x, y, w, h = box
    rgba = np.ascontiguousarray(cutout[y : y + h, x : x + w])
    filled = fill_holes(rgba)
    # Filled pixels show the product photo's own colour (the cut-out's edge clean-up
    # replaced it with the neighbours' where the mask was soft).
    changed = filled[..., 3] != rgba[..., 3]
    filled[..., :3][changed] = product[y : y + h, x : x + w, :3][changed]
    return read_garment(shrink(filled, MAX_GARMENT_SIDE)), how


def _outside(free: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """The pixels of ``free`` connected to the image border through ``free``."""
    padded = np.pad(free.astype(np.uint8), 1, constant_values=1)
    mask = np.zeros((padded.shape[0] + 2, padded.shape[1] + 2), np.uint8)
    cv2.floodFill(padded, mask, (0, 0), 2)
    return np.asarray(padded[1:-1, 1:-1] == 2)


def fill_holes(rgba: ImageArray) -> ImageArray:
    """``rgba`` with its enclosed holes made opaque: regions the alpha encloses, and partly
    transparent regions enclosed once gaps of about 1.5 % of the garment's size are bridged
    (a white stripe running to the garment's edge)."""
    alpha = rgba[..., 3]
    solid = alpha > 127
    r = max(1, round(0.008 * max(solid.shape)))
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    closed = cv2.morphologyEx(solid.astype(np.uint8), cv2.MORPH_CLOSE, kernel) > 0
    fill = ~_outside(~solid) | ((alpha > 20) & ~_outside(~closed))
    out = rgba.copy()
    out[..., 3] = np.where(fill, 255, alpha)
    return out


MIN_GARMENT_SHARE = 0.05
"""The fitted garment must cover at least this share of the person (a tee on a front-facing
adult covers about 40 %)."""
MIN_ON_BODY = 0.6
"""... and at least this share of the garment must lie on the person."""


def check_fit(garment: Bools, covered: Bools, person: Bools) -> None:
    """The quality gate of a fit: :class:`EngineError` (that output fails, uncharged) when the
    garment came out too small for the body or off it, as when the pose graph sees a person
    from behind or from the side (the shoulders and hips nearly on top of each other)."""
    area, body = int(garment.sum()), max(1, int(person.sum()))
    on = int(covered.sum()) / max(1, area)
    if area < MIN_GARMENT_SHARE * body or on < MIN_ON_BODY:
        raise EngineError(
            f"the garment could not be fitted to this body (it would cover {area / body:.0%} of "
            f"the person, {on:.0%} of it on the body): a person seen from behind or from the "
            "side, or a pose whose shoulders and hips are not visible from the front"
        )


def dress(avatar: Avatar, garment: Garment) -> Dressed:
    """Put ``garment`` on the person in ``avatar`` (the expensive part: the person's cut-out,
    the warp, the shading)."""
    body = complete_body(avatar.landmarks)
    alpha = cut_out(avatar)
    h, w = alpha.shape
    rgb = decontaminate_image(avatar.rgb, alpha).astype(np.float32) / 255.0
    radii = {
        side: arm_radius(alpha, avatar.landmarks[f"{side}_shoulder"],
                         avatar.landmarks[f"{side}_elbow"], 0.14 * body.unit)
        for side in ("left", "right")
        if f"{side}_shoulder" in avatar.landmarks and f"{side}_elbow" in avatar.landmarks
    }  # fmt: skip
    placement = place_garment(garment, body, avatar.landmarks, radii)
    colour, g_alpha = warp_garment(garment, placement, (h, w), 0.25 * body.unit)
    covered = (g_alpha > 0.5) & (alpha > 0.5)
    check_fit(g_alpha > 0.5, covered, alpha > 0.5)
    shade = body_shading(avatar.rgb, covered, 0.012 * body.unit)
    colour = colour * (1.0 + SHADE_STRENGTH * (shade - 1.0))[..., None]
    premult = colour * g_alpha[..., None] + rgb * alpha[..., None] * (1.0 - g_alpha[..., None])
    out_alpha = g_alpha + alpha * (1.0 - g_alpha)
    front = arms_in_front(alpha, avatar.landmarks, placement.sleeve_ends, body.unit)
    premult = rgb * (alpha * front)[..., None] + premult * (1.0 - front[..., None])
    out_alpha = alpha * front + out_alpha * (1.0 - front)
    figure = Figure(
        np.ascontiguousarray(premult, dtype=np.float32),
        np.ascontiguousarray(out_alpha, dtype=np.float32),
        body,
        avatar.landmarks,
    )
    return Dressed(figure, g_alpha, placement)


@dataclass(frozen=True)
class Look:
    """One planned variant."""

    position: int
    scene: str
    framing: Framing

    @property
    def label(self) -> str:
        return f"{self.scene}, {'full body' if self.framing == 'full' else 'half body'}"


def plan_looks(avatar: Avatar, reading: PromptReading, n: int, seed: int) -> list[Look]:
    """Backdrops: the prompt's scenes, else the studio set then other standing scenes;
    framings alternate full / half body (full only with the feet in the picture)."""
    scenes = choose_people_scenes(
        "clothing", reading.scenes, n, seed, pool=STUDIO_SCENES, fill=STANDING_SCENES
    )
    feet = feet_in_picture(avatar)
    looks = []
    for i, scene in enumerate(scenes):
        if not feet or reading.framing == "half":
            framing: Framing = "half"
        elif reading.framing == "full":
            framing = "full"
        else:
            framing = ("full", "half")[i % 2]
        looks.append(Look(i, scene, framing))
    return looks


def render_look(
    dressed: Lazy[Dressed], look: Look, reading: PromptReading, seed: int, height: int
) -> OutputImage:
    """Render one variant: ``height`` × ``3/4·height`` RGB."""
    fit = dressed.get()
    w = round(height * 3 / 4)
    staged = stage(fit.figure, None, look.scene, look.framing, seed, look.position, height, w)
    extra = {"scene": look.scene, "framing": look.framing}
    data = output_data(staged, fit.figure, reading, extra)
    return OutputImage(staged.pixels, label=look.label, data=data)


@dataclass(frozen=True)
class _Plan:
    planned: list[PlannedImage]
    looks: list[Look]
    reading: PromptReading
    cutout_method: str
    landmarks_source: str
    dressed: Lazy[Dressed]


class TryOnEngine(MultiImageBaseEngine[TryOnParams]):
    """``tryon``: ``num_outputs`` variants of an avatar wearing a garment.

    A :class:`~pixelmill.engines.base.MultiImageEngine`: :meth:`plan` checks the category,
    finds the person and reads the garment (raising :class:`EngineError` when it cannot); the
    fit is made on the first render and shared by the plan's variants."""

    name: ClassVar[str] = "tryon"
    Params: ClassVar[type[BaseModel]] = TryOnParams
    models = (U2NETP,)

    def _load(self) -> None:
        super()._load()
        load_person_models()

    def _validate(self, params: TryOnParams) -> None:
        check_category(params.category)

    def dress(self, inputs: EngineInputs, params: BaseModel) -> Dressed:
        """The fit alone (no backdrop): what every variant of a call shows."""
        typed = self.typed(params)
        self.load()
        return self._plan(inputs, typed).dressed.get()

    def _plan(self, inputs: EngineInputs, params: TryOnParams) -> _Plan:
        check_category(params.category)
        product = inputs.extra.get("product")
        if product is None:
            raise EngineError("a product image is needed (inputs.extra['product'])")
        avatar = find_avatar(inputs.image, params.landmarks)
        try:
            complete_body(avatar.landmarks)
        except EngineError:
            raise EngineError(
                "try-on needs the avatar's shoulders in the picture; none were found"
            ) from None
        garment, how = prepare_garment(product)
        reading = read_prompt(params.prompt)
        looks = plan_looks(avatar, reading, params.num_outputs, params.seed)
        dressed: Lazy[Dressed] = Lazy(partial(dress, avatar, garment))
        planned = [
            PlannedImage(
                position=look.position,
                label=look.label,
                render=partial(render_look, dressed, look, reading, params.seed, params.size),
            )
            for look in looks
        ]
        return _Plan(planned, looks, reading, how, avatar.source, dressed)

    def _run(self, inputs: EngineInputs, params: TryOnParams) -> EngineResult:
        plan = self._plan(inputs, params)
        images = [p.render() for p in plan.planned]
        framings = sorted({lk.framing for lk in plan.looks}, key=["full", "half"].index)
        shown = " and ".join(f"{f} body" for f in framings)
        landmarks = "given by the caller" if plan.landmarks_source == "given" else "MediaPipe pose"
        details: dict[str, Any] = {
            "method": METHOD.format(cutout=plan.cutout_method, landmarks=landmarks, framings=shown),
            "scenes": [lk.scene for lk in plan.looks],
            "framings": [lk.framing for lk in plan.looks],
            "keywords": list(plan.reading.keywords),
            "unrecognised": list(plan.reading.unrecognised),
            "category": "clothing",
            "seed": params.seed,
            "width": round(params.size * 3 / 4),
            "height": params.size,
        }
        return EngineResult(images, details)
