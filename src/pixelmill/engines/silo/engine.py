"""Silo shots: the product cut out (its own alpha, or U²-Net-p) and placed on a plain studio
ground the way catalogues show products: the same margin on every shot of a set (the subject's
longer side fills ``fill`` of the square), standing on an invisible floor a little below the
centre, and one of a fixed sequence of grounds and shadows (pure white with no shadow first,
the marketplace main image; then soft contact and cast shadows, a drop shadow, a faint
reflection, and light grey and warm or cool neutral grounds).

A photograph of the product is needed; nothing is generated: the method places the pixels the
photo already has."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar, NamedTuple

import numpy as np
from pydantic import BaseModel, Field

from pixelmill.engines.base import (
    EngineError,
    EngineInputs,
    EngineResult,
    MultiImageBaseEngine,
    OutputImage,
    PlannedImage,
)
from pixelmill.engines.runtime.layers import (
    crop_cutout,
    fit_box,
    layer_from_cutout,
    paste,
    prepare_cutout,
    to_uint8,
)
from pixelmill.engines.runtime.segmentation import U2NETP
from pixelmill.engines.runtime.shadows import add_drop_shadow, add_floor_shadow, add_reflection

MAX_SILOS = 12
METHOD = (
    "product cut out ({cutout}) and centred on a plain studio ground with a fixed margin; "
    "shadows drawn from its silhouette (no generative model)"
)


@dataclass(frozen=True)
class Variant:
    label: str
    ground: tuple[int, int, int]
    shadow: str  # none, floor, drop
    reflection: float = 0.0


VARIANTS = (
    Variant("white", (255, 255, 255), "none"),
    Variant("white-soft-shadow", (255, 255, 255), "floor"),
    Variant("light-grey-soft-shadow", (242, 242, 242), "floor"),
    Variant("white-drop-shadow", (255, 255, 255), "drop"),
    Variant("white-reflection", (255, 255, 255), "floor", 0.18),
    Variant("warm-neutral-soft-shadow", (245, 240, 232), "floor"),
    Variant("cool-neutral-soft-shadow", (236, 240, 244), "floor"),
    Variant("light-grey", (242, 242, 242), "none"),
)


class SiloParams(BaseModel):
    num_outputs: int = Field(1, ge=1, le=MAX_SILOS, description="silo shots; 1 credit each")
    size: int = Field(1600, ge=256, le=3000, description="side of the square output, pixels")
    fill: float = Field(
        0.8, ge=0.5, le=0.95, description="share of the square the product's longer side fills"
    )


def render_silo(cutout: np.ndarray, variant: Variant, size: int, fill: float) -> OutputImage:
    """One shot: ``cutout`` (cropped RGBA) on ``variant``'s ground."""
    canvas = np.empty((size, size, 3), np.float32)
    canvas[:] = np.asarray(variant.ground, np.float32) / 255.0
    h, w = cutout.shape[:2]
    # The same margin whatever the shape: the longer side fills `fill`; the subject stands with
    # its base where a centred subject's base would be, so a set lines up.
    k = fill * size / max(h, w)
    base = 0.5 + (h * k) / (2 * size)
    box = fit_box((h, w), (size, size), height=h * k / size, base=base, max_width=fill)
    layer = layer_from_cutout(cutout, box)
    if variant.shadow == "floor":
        add_floor_shadow(canvas, layer, 0.8)
    elif variant.shadow == "drop":
        add_drop_shadow(canvas, layer, 0.6)
    if variant.reflection > 0:
        add_reflection(canvas, layer, variant.reflection)
    paste(canvas, layer)
    pixels = to_uint8(canvas, np.random.default_rng(0))
    return OutputImage(pixels, label=variant.label, data={"ground": list(variant.ground)})


class _Plan(NamedTuple):
    planned: list[PlannedImage]
    how: str
    """How the cut-out was obtained."""


class SiloEngine(MultiImageBaseEngine[SiloParams]):
    """A :class:`~pixelmill.engines.base.MultiImageEngine`: the cut-out is made once, each shot
    renders on its own."""

    name: ClassVar[str] = "silo"
    Params: ClassVar[type[BaseModel]] = SiloParams
    models = (U2NETP,)

    def _plan(self, inputs: EngineInputs, params: SiloParams) -> _Plan:
        try:
            rgba, how = prepare_cutout(inputs.image)
        except EngineError as exc:
            raise EngineError(str(exc).replace("to place in a scene", "for a silo shot")) from exc
        cutout = crop_cutout(rgba)
        chosen = [VARIANTS[i % len(VARIANTS)] for i in range(params.num_outputs)]
        planned = [
            PlannedImage(i, v.label, partial(render_silo, cutout, v, params.size, params.fill))
            for i, v in enumerate(chosen)
        ]
        return _Plan(planned, how)

    def _run(self, inputs: EngineInputs, params: SiloParams) -> EngineResult:
        planned, how = self._plan(inputs, params)
        details: dict[str, Any] = {
            "method": METHOD.format(cutout=how),
            "variants": [p.label for p in planned],
            "width": params.size,
            "height": params.size,
            "fill": params.fill,
        }
        return EngineResult([p.render() for p in planned], details)
