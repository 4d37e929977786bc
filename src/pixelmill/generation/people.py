"""People: the ``product_photo`` and ``tryon`` job kinds (a saved product with a saved avatar,
through the registry's engine of the catalog operation of the same name; the plan loads the
avatar and the product from the library store and hands the avatar's landmarks to the
engine), and what the surfaces share about people: refusing a photo with no person in it
before anything is reserved, resolving a public gallery model to a job's person, and the
synchronous try-on (:func:`try_on`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.orm import Session

from pixelmill.categories import Category, from_spec
from pixelmill.db.models import User
from pixelmill.engines.avatar import GalleryModel, gallery_model
from pixelmill.engines.base import (
    EngineError,
    EngineInputs,
    MultiImageEngine,
    PlannedImage,
)
from pixelmill.errors import InvalidInput, NotFound
from pixelmill.generation.gallery import gallery_person
from pixelmill.generation.service import Model, PeopleJobParams, operation_for
from pixelmill.imaging import DecodedImage
from pixelmill.jobs.requests import Backends
from pixelmill.jobs.runner import Rendered
from pixelmill.jobs.service import Claim
from pixelmill.library import service as library
from pixelmill.library.images import SavedImage
from pixelmill.operations.inputs import ImageSource
from pixelmill.operations.params import multi_image_engine_for
from pixelmill.operations.results import Outcome


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


def _own_model(backends: Backends, user_id: int, avatar_id: str) -> Model:
    with backends.db.read() as session:
        return Model.of(library.get_avatar(session, user_id, avatar_id))


async def _tryon_model(backends: Backends, user: User, model_id: str, model_type: str) -> Model:
    if model_type == "public":
        public = gallery_model(model_id)
        if public is None:
            raise NotFound("Public model not found (see GET /api/v2/avatars/public)")
        return await gallery_model_person(backends, public)
    return await asyncio.to_thread(_own_model, backends, user.id, model_id)


async def try_on(
    backends: Backends,
    user: User,
    base_url: str,
    *,
    product: bytes,
    model_id: str,
    model_type: str,
    model_image_url: str | None,
    category: str | None,
    prompt: str,
    num_outputs: int,
) -> Outcome:
    """The synchronous try-on (``/api/tryon/generate``): the garment on a public gallery
    model, one of the account's avatars, or the person photo at ``model_image_url`` (which
    then wins), ``num_outputs`` images at 1 credit each (a non-clothing ``category``, in the
    spec's vocabulary, is a 422, nothing charged)."""
    spec_category = (category or Category.CLOTHING).strip().lower()
    params: dict[str, object] = {
        "num_outputs": num_outputs,
        "prompt": prompt or None,
        "category": from_spec(spec_category),
    }
    if model_image_url:
        source = ImageSource("url", model_image_url)
    else:
        model = await _tryon_model(backends, user, model_id, model_type)
        stored = await asyncio.to_thread(backends.library_storage.get, model.image_key)
        if stored is None:
            raise NotFound("The model's image is missing")
        source = ImageSource("bytes", stored.data)
        params["landmarks"] = model.landmarks
    return await backends.pipeline.run(
        "tryon",
        source,
        params,
        user=user,
        surface="tryon",
        base_url=base_url,
        output_format="jpeg",
        quality=90,
        extra_inputs={"product": ImageSource("bytes", product)},
    )
