"""Generation's job requests (:class:`pixelmill.jobs.requests.JobRequest`): one per create
endpoint, built by its handler from the typed body: scenes, scenes from a URL, people
(product photo, try-on), a product job from an upload, avatars, and scene batches."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from pixelmill.categories import normalise_category
from pixelmill.engines.avatar import GuidedAvatarParams, gallery_model
from pixelmill.errors import InvalidInput, NotFound
from pixelmill.generation.people import check_person, gallery_model_person
from pixelmill.generation.scenes import SCENES_KIND, scene_price
from pixelmill.generation.schemas import AvatarCreate, AvatarJobCreated, AvatarPhotoCreate
from pixelmill.generation.service import (
    AVATAR_KIND,
    AvatarJobParams,
    Model,
    PeopleJobParams,
    operation_for,
    people_kind,
    prompt_warnings,
)
from pixelmill.jobs import batches
from pixelmill.jobs.requests import JobRequestBase
from pixelmill.jobs.schemas import (
    BatchCreate,
    BatchCreated,
    JobCreate,
    JobCreated,
    ScenesCreate,
    ScenesFromUrlCreate,
)
from pixelmill.library import service as library
from pixelmill.library.describe import describe
from pixelmill.library.images import SavedImage
from pixelmill.operations.catalog import CATALOG
from pixelmill.operations.inputs import ImageSource
from pixelmill.operations.params import engine_for, parse_params


@dataclass
class _Request(JobRequestBase):
    """A generation request: scene and people jobs for a saved product or an upload."""

    def _scene_job(
        self,
        session: Session,
        input_key: str,
        count: int,
        category: str,
        product_id: str | None = None,
    ) -> JobCreated:
        job, remaining = self._create_job(
            session,
            SCENES_KIND,
            count,
            scene_price(count),
            input_key=input_key,
            category=normalise_category(category),
            product_id=product_id,
        )
        return JobCreated.of(job, remaining, self.base_url)

    def _people_job(
        self,
        session: Session,
        kind: str,
        count: int,
        prompt: str | None,
        category: str,
        input_key: str,
        model: Model,
        product_id: str | None = None,
    ) -> JobCreated:
        """A ``product_photo`` or ``tryon`` job: the engine's parameters are checked first (a
        non-clothing try-on is a 422), then the catalog's price per image reserved. Prompt
        words the engines cannot use are kept as the job's ``warnings`` (shown on creation
        and on every poll)."""
        engine = engine_for(self.backends.engines, CATALOG[kind])
        raw = {"num_outputs": count, "prompt": prompt, "category": category}
        job, remaining = self._create_job(
            session,
            kind,
            count,
            CATALOG[kind].price(parse_params(engine, raw)),
            input_key=input_key,
            category=category,
            params=PeopleJobParams(
                avatar_id=model.avatar_id,
                avatar_key=model.image_key,
                landmarks=model.landmarks,
                prompt=prompt,
                own_inputs=[model.image_key] if model.own else [],
                warnings=prompt_warnings(prompt),
            ),
            product_id=product_id,
        )
        return JobCreated.of(job, remaining, self.base_url)


@dataclass
class ScenesRequest(_Request):
    """``POST /api/v2/generate/scenes``: scenes of a saved product."""

    body: ScenesCreate = field(kw_only=True)

    async def prepare(self) -> None:
        await self._check_webhook(self.body.webhook_url)

    def create(self, session: Session) -> JobCreated:
        product = library.get_product(session, self.user.id, self.body.product_uuid)
        category = self.body.category or product.category
        count = self.body.num_scenes
        return self._scene_job(session, product.image_key, count, category, product.id)


@dataclass
class ScenesFromUrlRequest(_Request):
    """``POST /api/v2/generate/scenes-from-url``: the image fetched (SSRF-guarded) and saved
    as a product, then its scenes."""

    body: ScenesFromUrlCreate = field(kw_only=True)
    product_id: str = field(default_factory=lambda: str(uuid.uuid4()), init=False)
    saved: SavedImage | None = field(default=None, init=False)
    description: str = field(default="", init=False)

    async def prepare(self) -> None:
        await self._check_webhook(self.body.webhook_url)
        source = ImageSource("url", self.body.image_url)
        self.saved = await self._save(source, "products", self.product_id)
        # CPU work: off the event loop.
        self.description = await asyncio.to_thread(describe, self.saved.image.pixels)

    def create(self, session: Session) -> JobCreated:
        assert self.saved is not None
        filename = self.body.image_url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
        filename = filename or "product"
        product = library.add_product(
            session,
            self.backends.queue,
            self.user.id,
            self.saved,
            analyze=self.backends.settings.analyze_products,
            product_id=self.product_id,
            name=self.body.name or filename.rsplit(".", 1)[0] or "product",
            filename=filename[:255],
            category=self.body.category,
            description=self.description,
            description_given=False,
        )
        count, category = self.body.num_scenes, product.category
        return self._scene_job(session, product.image_key, count, category, product.id)

    def discard(self) -> None:
        self._delete(self.saved.key if self.saved else "")


@dataclass
class PeopleRequest(_Request):
    """``POST /api/v2/generate/product-photo`` and ``/tryon``: the product and the avatar are
    read through the account's scope (another account's id is a 404, the product reported
    first)."""

    kind: str = field(kw_only=True)
    body: AvatarPhotoCreate = field(kw_only=True)

    async def prepare(self) -> None:
        await self._check_webhook(self.body.webhook_url)

    def create(self, session: Session) -> JobCreated:
        body = self.body
        product = library.get_product(session, self.user.id, body.product_uuid)
        avatar = library.get_avatar(session, self.user.id, body.avatar_uuid)
        return self._people_job(
            session,
            self.kind,
            body.num_outputs,
            body.prompt,
            product.category,
            product.image_key,
            Model.of(avatar),
            product.id,
        )


@dataclass
class ProductJobRequest(_Request):
    """``POST /api/v2/jobs``: an uploaded product image; without a model a scene job, with
    ``model_id`` (a public model or one of the account's avatars) or ``model_url`` (a photo
    of a person) a people job."""

    body: JobCreate = field(kw_only=True)
    saved: SavedImage | None = field(default=None, init=False)
    model: Model | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if self.body.model_id and self.body.model_url:
            raise InvalidInput("Give model_id or model_url, not both")

    async def prepare(self) -> None:
        await self._check_webhook(self.body.webhook_url)
        self.saved = await self._save(ImageSource("base64", self.body.product_image), "inputs")
        try:
            self.model = await self._model()
        except Exception:
            await asyncio.to_thread(self._delete, self.saved.key)
            raise

    async def _model(self) -> Model | None:
        if self.body.model_url:
            photo = await self._save(ImageSource("url", self.body.model_url), "inputs")
            await check_person(self.backends, photo, "model_url")
            return Model(photo.key, own=True)
        if self.body.model_id and (public := gallery_model(self.body.model_id)) is not None:
            return await gallery_model_person(self.backends, public)
        return None  # no model, or one of the account's avatars (read in the transaction)

    def create(self, session: Session) -> JobCreated:
        body, saved, model = self.body, self.saved, self.model
        assert saved is not None
        category = normalise_category(body.category)
        if model is None and body.model_id:
            try:
                model = Model.of(library.get_avatar(session, self.user.id, body.model_id))
            except NotFound as exc:
                raise NotFound(
                    "model_id is neither a public model (GET /api/v2/avatars/public) nor one "
                    "of your avatars"
                ) from exc
        if model is not None:
            kind = people_kind(category)
            count, prompt = body.images_to_generate, body.custom_prompt
            return self._people_job(session, kind, count, prompt, category, saved.key, model)
        created = self._scene_job(session, saved.key, body.images_to_generate, category)
        if body.custom_prompt:
            created.warnings = [
                "custom_prompt is not used by scene jobs (scenes follow the category); "
                "give model_id or model_url for prompt-steered photos"
            ]
        return created

    def discard(self) -> None:
        own = self.model.image_key if self.model is not None and self.model.own else ""
        self._delete(self.saved.key if self.saved else "", own)


@dataclass
class AvatarRequest(_Request):
    """``POST /api/v2/generate/avatar``: guided from a prompt, or from a reference photo (a
    photo with no person is a 422, nothing charged)."""

    body: AvatarCreate = field(kw_only=True)
    input_key: str = field(default="", init=False)

    async def prepare(self) -> None:
        body = self.body
        await self._check_webhook(body.webhook_url)
        if body.generation_type == "guided":
            return
        source = ImageSource.choose(body.reference_image_base64, body.reference_image_url)
        saved = await self._save(source, "inputs")
        await check_person(self.backends, saved, "reference_image")
        self.input_key = saved.key

    def create(self, session: Session) -> AvatarJobCreated:
        body = self.body
        count = body.num_outputs
        price = operation_for(body.generation_type).price(GuidedAvatarParams(num_outputs=count))
        params = AvatarJobParams(
            generation_type=body.generation_type,
            prompt=body.prompt,
            characteristics=body.characteristics,
            name=body.name,
        )
        job, remaining = self._create_job(
            session, AVATAR_KIND, count, price, input_key=self.input_key, params=params
        )
        return AvatarJobCreated(
            job_id=job.id,
            status=job.status,
            poll_url=self.base_url.rstrip("/") + f"/api/v2/jobs/avatar/{job.id}",
            images_to_generate=job.images_to_generate,
            credits_reserved=job.credits_reserved,
            credits_remaining=remaining,
            test=job.test,
        )

    def discard(self) -> None:
        self._delete(self.input_key)


@dataclass
class BatchRequest(_Request):
    """``POST /api/v2/batches``: each image stored, then one scene job per image on one
    reservation."""

    body: BatchCreate = field(kw_only=True)
    items: list[batches.BatchItem] = field(default_factory=list, init=False)

    async def prepare(self) -> None:
        ids = [img.id for img in self.body.images]
        if len(set(ids)) != len(ids):
            raise InvalidInput("images[].id must be unique within a batch")
        await self._check_webhook(self.body.webhook_url)
        for img in self.body.images:
            try:
                saved = await self._save(ImageSource("base64", img.image), "inputs")
            except InvalidInput as exc:
                raise InvalidInput(f"images[{img.id}]: {exc.message}") from exc
            category = normalise_category(img.category)
            self.items.append(batches.BatchItem(img.id, saved.key, category))

    def create(self, session: Session) -> BatchCreated:
        per_item = self.body.images_per_product
        batch, remaining = batches.create_batch(
            session,
            self.backends.jobs,
            user_id=self.user.id,
            test=self.user.via_test_key,
            items=self.items,
            kind=SCENES_KIND,
            per_item=per_item,
            per_item_price=scene_price(per_item),
            base_url=self.base_url,
            webhook_url=self.webhook_url,
        )
        return BatchCreated.of(batch, remaining, self.base_url)

    def discard(self) -> None:
        self._delete(*(item.input_key for item in self.items))
