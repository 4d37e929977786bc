"""What the generation and job surfaces share about people: refusing a photo with no person in
it before anything is reserved, and resolving a public gallery model to a job's person."""

from __future__ import annotations

import asyncio
from functools import partial

from pixelmill.engines.avatar import GalleryModel
from pixelmill.engines.base import EngineError, EngineInputs, MultiImageEngine
from pixelmill.errors import InvalidInput
from pixelmill.generation.gallery import gallery_person
from pixelmill.generation.service import Model, operation_for
from pixelmill.library.images import SavedImage
from pixelmill.operations.params import multi_image_engine_for
from pixelmill.resources import Resources


def avatar_engine(resources: Resources, generation_type: str) -> MultiImageEngine:
    return multi_image_engine_for(resources.engines, operation_for(generation_type))


async def check_person(resources: Resources, saved: SavedImage, field: str) -> None:
    """Refuse a photo without a person (the reference engine's up-front detection) before
    anything is reserved; the uploaded file is removed again."""
    engine = avatar_engine(resources, "reference")
    params = engine.Params.model_validate({"num_outputs": 1})
    inputs = EngineInputs(saved.image.pixels)
    try:
        async with resources.pipeline.admission.slot():
            await asyncio.get_running_loop().run_in_executor(
                resources.pipeline.cpu, partial(engine.plan, inputs, params)
            )
    except EngineError as exc:
        await asyncio.to_thread(resources.library_storage.delete, saved.key)
        raise InvalidInput(f"{field}: {exc}") from exc


async def gallery_model_person(resources: Resources, model: GalleryModel) -> Model:
    """A public model as a job's person (drawn once into the library store, in the CPU pool)."""
    call = partial(
        gallery_person, avatar_engine(resources, "guided"), resources.library_storage, model
    )
    async with resources.pipeline.admission.slot():
        return await asyncio.get_running_loop().run_in_executor(resources.pipeline.cpu, call)
