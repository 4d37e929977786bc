"""People: the ``product_photo`` and ``tryon`` job kinds (a saved product with a saved avatar,
through the registry's engine of the catalog operation of the same name; the plan loads the
avatar and the product from the library store and hands the avatar's landmarks to the
engine), and what the surfaces share about people: refusing a photo with no person in it
before anything is reserved, resolving a public gallery model to a job's person."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.orm import Session

from pixelmill.engines.avatar import GalleryModel
from pixelmill.engines.base import (
    EngineError,
    EngineInputs,
    MultiImageEngine,
    PlannedImage,
)
from pixelmill.errors import InvalidInput
from pixelmill.generation.gallery import gallery_person
from pixelmill.generation.service import Model, PeopleJobParams, operation_for
from pixelmill.imaging import DecodedImage
from pixelmill.jobs.requests import Backends
from pixelmill.jobs.runner import Rendered
from pixelmill.jobs.service import Claim
from pixelmill.library.images import SavedImage
from pixelmill.operations.params import multi_image_engine_for


def avatar_engine(backends: Backends, generation_type: str) -> MultiImageEngine:
    return multi_image_engine_for(backends.engines, operation_for(generation_type))


async def check_person(backends: Backends, saved: SavedImage, field: str) -> None:
    """Refuse a photo without a person (the reference engine's up-front detection) before
    anything is reserved; the uploaded file is removed again."""
    engine = avatar_engine(backends, "reference")
    params = engine.Params.model_validate({"num_outputs": 1})
    try:
        await backends.pipeline.run_free(engine.plan, EngineInputs(saved.image.pixels), params)
    except EngineError as exc:
        await asyncio.to_thread(backends.library_storage.delete, saved.key)
        raise InvalidInput(f"{field}: {exc}") from exc


async def gallery_model_person(backends: Backends, model: GalleryModel) -> Model:
    """A public model as a job's person (drawn once into the library store, in the CPU pool)."""
    engine = avatar_engine(backends, "guided")
    return await backends.pipeline.run_free(gallery_person, engine, backends.library_storage, model)


def people_params(claim: Claim, p: PeopleJobParams) -> dict[str, object]:
    """The engine parameters of a people job, from the job row."""
    return {
        "num_outputs": claim.count,
        "prompt": p.prompt,
        "category": claim.category,
        "seed": claim.seed,
        "landmarks": p.landmarks,
    }


@dataclass(frozen=True)
class PeopleKind:
    engine: MultiImageEngine
    load_input: Callable[[str], DecodedImage]
    result_format: str = "jpeg"
    subject: str = "product and avatar"

    def plan(self, claim: Claim) -> list[PlannedImage]:
        p = claim.typed(PeopleJobParams)
        avatar = self.load_input(p.avatar_key)
        product = self.load_input(claim.input_key)
        params = self.engine.Params.model_validate(people_params(claim, p))
        self.engine.validate(params)
        self.engine.load()
        inputs = EngineInputs(avatar.pixels, {"product": product.pixels})
        return self.engine.plan(inputs, params)

    def record(self, session: Session, claim: Claim, rendered: Rendered) -> None:
        return None
