"""The ``scenes`` engine: product photos placed in procedurally painted scenes.

The product is cut out (its own alpha channel when it has a meaningful one, otherwise the
U²-Net-p salient-object mask), then composited onto ``num_scenes`` different backdrops chosen
for its category. There is no generative model: backdrops are painted from gradients, noise and
shapes (``runtime/backdrops.py``, catalogued in ``runtime/scenery.py``), which is what runs
offline on a CPU in well under a second per image (``docs/models.md``, "Product scene
photography").
"""

from __future__ import annotations

from functools import partial
from typing import Any, ClassVar, NamedTuple

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
from pixelmill.engines.runtime.layers import prepare_cutout
from pixelmill.engines.runtime.scenery import (
    CATEGORIES,
    MAX_SCENES,
    choose_scenes,
    render_scene,
)
from pixelmill.engines.runtime.segmentation import U2NETP

METHOD = (
    "procedural backdrop, no generative model: product cut out ({cutout}), composited with "
    "contact shadow, optional floor reflection and light colour harmonisation"
)


class ScenesParams(BaseModel):
    """Options for ``scenes``."""

    num_scenes: int = Field(4, ge=1, le=12, description="how many scenes to render (1-12)")
    category: str = Field(
        "other",
        description="product category, picks suitable scenes: " + ", ".join(CATEGORIES),
    )
    seed: int = Field(0, ge=0, le=2**32 - 1, description="varies scene order and details")
    size: int = Field(1024, ge=256, le=2048, description="side of the square output, pixels")


def _scene_output(cutout: ImageArray, scene_name: str, seed: int, size: int) -> OutputImage:
    """One scene of a call as an output image labelled with the scene's name."""
    return OutputImage(render_scene(cutout, scene_name, seed, size), label=scene_name)


class _Plan(NamedTuple):
    planned: list[PlannedImage]
    how: str
    """How the cut-out was obtained."""


class ScenesEngine(MultiImageBaseEngine[ScenesParams]):
    """Product-photo scenes: ``num_scenes`` images, each labelled with its scene's name.

    A :class:`~pixelmill.engines.base.MultiImageEngine`: :meth:`plan` cuts the product out and
    chooses the scenes once; each planned scene renders on its own, to the same pixels as in a
    whole :meth:`run` (a scene depends only on the cut-out, its name, the seed and the size)."""

    name: ClassVar[str] = "scenes"
    Params: ClassVar[type[BaseModel]] = ScenesParams
    models = (U2NETP,)

    def _plan(self, inputs: EngineInputs, params: ScenesParams) -> _Plan:
        """The planned scenes and how the cut-out was obtained."""
        if params.num_scenes > MAX_SCENES:
            raise EngineError(f"at most {MAX_SCENES} scenes per call")
        cutout, how = prepare_cutout(inputs.image)
        names = choose_scenes(normalise_category(params.category), params.num_scenes, params.seed)
        planned = [
            PlannedImage(
                position=i,
                label=name,
                render=partial(_scene_output, cutout, name, params.seed, params.size),
            )
            for i, name in enumerate(names)
        ]
        return _Plan(planned, how)

    def _run(self, inputs: EngineInputs, params: ScenesParams) -> EngineResult:
        planned, how = self._plan(inputs, params)
        images = [scene.render() for scene in planned]
        details: dict[str, Any] = {
            "method": METHOD.format(cutout=how),
            "scenes": [scene.label for scene in planned],
            "category": normalise_category(params.category),
            "seed": params.seed,
            "width": params.size,
            "height": params.size,
        }
        return EngineResult(images, details)
