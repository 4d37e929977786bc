"""v2 asynchronous generation: scene jobs (``/api/v2/generate/scenes`` and
``/api/v2/generate/scenes-from-url``; poll ``GET /api/v2/jobs/{job_id}``) and avatars
(``/api/v2/generate/avatar``; poll ``GET /api/v2/jobs/avatar/{job_id}``). Creates answer 202
with ``job_id``, ``status``, ``poll_url`` and ``credits_reserved``."""

from __future__ import annotations

import asyncio
import uuid

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy.orm import Session

from pixelmill.api.deps import ApiKeyUser, Res
from pixelmill.api.idempotent import idempotent_create
from pixelmill.api.rendering import public_base_url
from pixelmill.api.v2.people import check_person
from pixelmill.categories import normalise_category
from pixelmill.db.models import Product
from pixelmill.generation import service as generation
from pixelmill.generation.schemas import (
    AvatarCreate,
    AvatarJobCreated,
    AvatarJobStatus,
    AvatarPhotoCreate,
)
from pixelmill.jobs import service as jobs
from pixelmill.jobs.schemas import (
    JobCreated,
    ScenesCreate,
    ScenesFromUrlCreate,
)
from pixelmill.library import service as library
from pixelmill.library.describe import describe
from pixelmill.library.images import SavedImage, save_image
from pixelmill.operations.catalog import CATALOG
from pixelmill.operations.inputs import ImageSource
from pixelmill.operations.params import engine_for, parse_params
from pixelmill.resources import Resources
from pixelmill.webhooks.registry import checked_webhook_url

router = APIRouter(prefix="/api/v2", tags=["v2 generation"])


def _product_job(
    session: Session,
    resources: Resources,
    product: Product,
    count: int,
    category: str,
    webhook_url: str | None,
    base_url: str,
) -> JobCreated:
    """A scene job for a saved product (its image, its id on the job)."""
    job, remaining = jobs.create_scene_job(
        session,
        resources.jobs,
        user_id=product.user_id,
        input_key=product.image_key,
        count=count,
        category=normalise_category(category),
        base_url=base_url,
        product_id=product.id,
        webhook_url=webhook_url,
    )
    return JobCreated.of(job, remaining, base_url)


@router.post("/generate/scenes", status_code=202, responses={202: {"model": JobCreated}})
async def generate_scenes(
    body: ScenesCreate, user: ApiKeyUser, resources: Res, request: Request
) -> JSONResponse:
    """Product photos in procedurally generated scenes for a saved product; 1 credit per scene,
    reserved now, unused credits returned when the job ends. Honours ``Idempotency-Key``."""
    base_url = public_base_url(request, resources)

    async def prepare() -> str | None:
        return await checked_webhook_url(body.webhook_url, resources.settings)

    def create(session: Session, webhook_url: str | None) -> JobCreated:
        product = library.get_product(session, user.id, body.product_uuid)
        category = body.category or product.category
        return _product_job(
            session, resources, product, body.num_scenes, category, webhook_url, base_url
        )

    return await idempotent_create(request, resources.db, user, body, 202, prepare, create)


@router.post("/generate/scenes-from-url", status_code=202, responses={202: {"model": JobCreated}})
async def generate_scenes_from_url(
    body: ScenesFromUrlCreate, user: ApiKeyUser, resources: Res, request: Request
) -> JSONResponse:
    """Fetch the image (SSRF-guarded), save it as a product, start a scene job; 1 credit per
    scene. Honours ``Idempotency-Key``."""
    base_url = public_base_url(request, resources)
    product_id = str(uuid.uuid4())
    filename = body.image_url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] or "product"

    async def prepare() -> tuple[str | None, SavedImage, str]:
        webhook_url = await checked_webhook_url(body.webhook_url, resources.settings)
        saved = await save_image(
            resources.inputs,
            resources.library_storage,
            ImageSource("url", body.image_url),
            user,
            "products",
            product_id,
        )
        # CPU work: off the event loop.
        description = await asyncio.to_thread(describe, saved.image.pixels)
        return webhook_url, saved, description

    def create(session: Session, prepared: tuple[str | None, SavedImage, str]) -> JobCreated:
        webhook_url, saved, description = prepared
        product = library.add_product(
            session,
            resources.queue,
            user.id,
            saved,
            analyze=resources.settings.analyze_products,
            product_id=product_id,
            name=body.name or filename.rsplit(".", 1)[0] or "product",
            filename=filename[:255],
            category=body.category,
            description=description,
            description_given=False,
        )
        return _product_job(
            session, resources, product, body.num_scenes, product.category, webhook_url, base_url
        )

    def discard(prepared: tuple[str | None, SavedImage, str]) -> None:
        resources.library_storage.delete(prepared[1].key)

    return await idempotent_create(request, resources.db, user, body, 202, prepare, create, discard)


async def _people_job(
    kind: str, body: AvatarPhotoCreate, user: ApiKeyUser, resources: Res, request: Request
) -> JSONResponse:
    """A product-photo or try-on job: the product and the avatar are read through the
    account's scope (another account's id is a 404, the product reported first) and the
    engine's parameters checked (a non-clothing try-on is a 422) before anything is reserved."""
    base_url = public_base_url(request, resources)

    async def prepare() -> str | None:
        return await checked_webhook_url(body.webhook_url, resources.settings)

    def create(session: Session, webhook_url: str | None) -> JobCreated:
        product = library.get_product(session, user.id, body.product_uuid)
        avatar = library.get_avatar(session, user.id, body.avatar_uuid)
        engine = engine_for(resources.engines, CATALOG[kind])
        raw = {"num_outputs": body.num_outputs, "prompt": body.prompt, "category": product.category}
        params = parse_params(engine, raw)
        job, remaining = generation.create_people_job(
            session,
            resources.jobs,
            kind,
            params,
            user_id=user.id,
            count=body.num_outputs,
            input_key=product.image_key,
            category=product.category,
            model=generation.Model.of(avatar),
            prompt=body.prompt,
            base_url=base_url,
            product_id=product.id,
            webhook_url=webhook_url,
        )
        return JobCreated.of(job, remaining, base_url)

    return await idempotent_create(request, resources.db, user, body, 202, prepare, create)


@router.post("/generate/product-photo", status_code=202, responses={202: {"model": JobCreated}})
async def generate_product_photo(
    body: AvatarPhotoCreate, user: ApiKeyUser, resources: Res, request: Request
) -> JSONResponse:
    """The product held by, or placed beside, a saved avatar in ``num_outputs`` scenes chosen
    from the prompt's keywords; 1 credit per image, reserved now, unused credits returned when
    the job ends. Poll ``GET /api/v2/jobs/{job_id}``. Honours ``Idempotency-Key``."""
    return await _people_job("product_photo", body, user, resources, request)


@router.post("/generate/tryon", status_code=202, responses={202: {"model": JobCreated}})
async def generate_tryon(
    body: AvatarPhotoCreate, user: ApiKeyUser, resources: Res, request: Request
) -> JSONResponse:
    """Virtual try-on of a clothing product on a saved avatar (a non-clothing product is a
    422, nothing charged); 1 credit per image. Poll ``GET /api/v2/jobs/{job_id}``. Honours
    ``Idempotency-Key``."""
    return await _people_job("tryon", body, user, resources, request)


@router.post("/generate/avatar", status_code=202, responses={202: {"model": AvatarJobCreated}})
async def generate_avatar(
    body: AvatarCreate, user: ApiKeyUser, resources: Res, request: Request
) -> JSONResponse:
    """Avatars on the job machinery, 1 credit each: ``guided`` draws people from ``prompt`` and
    ``characteristics``; ``reference`` turns the person in a photo into studio avatars (a photo
    with no person is a 422, nothing charged). Poll ``GET /api/v2/jobs/avatar/{job_id}``; the
    avatars also appear in ``GET /api/v2/avatars``. Honours ``Idempotency-Key``."""
    base_url = public_base_url(request, resources)

    async def prepare() -> tuple[str | None, str]:
        webhook_url = await checked_webhook_url(body.webhook_url, resources.settings)
        if body.generation_type == "guided":
            return webhook_url, ""
        source = ImageSource.choose(body.reference_image_base64, body.reference_image_url)
        saved = await save_image(
            resources.inputs, resources.library_storage, source, user, "inputs"
        )
        await check_person(resources, saved, "reference_image")
        return webhook_url, saved.key

    def create(session: Session, prepared: tuple[str | None, str]) -> AvatarJobCreated:
        webhook_url, input_key = prepared
        job, remaining = generation.create_avatar_job(
            session,
            resources.jobs,
            body,
            user_id=user.id,
            input_key=input_key,
            base_url=base_url,
            webhook_url=webhook_url,
        )
        return AvatarJobCreated(
            job_id=job.id,
            status=job.status,
            poll_url=base_url.rstrip("/") + f"/api/v2/jobs/avatar/{job.id}",
            images_to_generate=job.images_to_generate,
            credits_reserved=job.credits_reserved,
            credits_remaining=remaining,
        )

    def discard(prepared: tuple[str | None, str]) -> None:
        if prepared[1]:
            resources.library_storage.delete(prepared[1])

    return await idempotent_create(request, resources.db, user, body, 202, prepare, create, discard)


@router.get("/jobs/avatar/{job_id}", response_model=AvatarJobStatus)
def get_avatar_job(
    job_id: str, user: ApiKeyUser, resources: Res, request: Request
) -> AvatarJobStatus:
    """An avatar job's status, progress and results, and the avatars it saved."""
    base_url = public_base_url(request, resources)
    with resources.db.read() as session:
        return generation.avatar_job_status(session, resources.signer, user.id, job_id, base_url)
