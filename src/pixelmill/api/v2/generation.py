"""v2 asynchronous generation: scene jobs (``/api/v2/generate/scenes`` and
``/api/v2/generate/scenes-from-url``). Both answer 202 with ``job_id``, ``status``,
``poll_url`` and ``credits_reserved``; poll ``GET /api/v2/jobs/{job_id}``."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from pixelmill import idempotency
from pixelmill.api.deps import ApiKeyUser, Res
from pixelmill.api.rendering import public_base_url
from pixelmill.db.models import Job, User
from pixelmill.errors import InvalidInput
from pixelmill.jobs import service as jobs
from pixelmill.library import service as library
from pixelmill.library.analysis import add_product
from pixelmill.library.describe import describe
from pixelmill.library.images import save_image
from pixelmill.operations.pipeline import ImageSource
from pixelmill.resources import Resources
from pixelmill.webhooks.registry import check_webhook_url

router = APIRouter(prefix="/api/v2", tags=["v2 generation"])


class ScenesCreate(BaseModel):
    product_uuid: str = Field(description="a product saved with POST /api/v2/products")
    num_scenes: int = Field(6, ge=1, le=12, description="1 credit per scene")
    category: str | None = Field(None, description="default: the product's category")
    webhook_url: str | None = Field(None, description="job.completed / job.failed go here")


class ScenesFromUrlCreate(BaseModel):
    image_url: str = Field(min_length=1, description="public http(s) URL of the product image")
    num_scenes: int = Field(4, ge=1, le=12, description="1 credit per scene")
    category: str | None = None
    name: str | None = Field(None, max_length=255)
    webhook_url: str | None = None


class JobProgress(BaseModel):
    completed: int
    failed: int
    total: int


class JobResultOut(BaseModel):
    scene: str = Field(description="the scene's name")
    url: str = Field(description="signed, expiring URL of the image")
    created_at: str | None = None


class JobCreated(BaseModel):
    """The 202 body of a job create (``job_id``, ``status``, ``poll_url``,
    ``credits_reserved``, ...)."""

    job_id: str
    status: str
    poll_url: str
    images_to_generate: int
    credits_reserved: int
    credits_remaining: int
    product_uuid: str | None = None


class JobStatus(BaseModel):
    """A job's state; poll until ``status`` is ``completed`` or ``failed``."""

    job_id: str
    status: str = Field(description="pending, queued, processing, completed or failed")
    type: str
    images_to_generate: int
    progress: JobProgress
    credits_reserved: int
    credits_used: int
    results: list[JobResultOut]
    error: str | None
    product_uuid: str | None
    batch_id: str | None
    created_at: str | None
    started_at: str | None
    completed_at: str | None


class JobListItem(BaseModel):
    job_id: str
    status: str
    type: str
    images_to_generate: int
    credits_used: int
    batch_id: str | None
    created_at: str | None
    completed_at: str | None


def job_created(
    job: Job, remaining: int, base_url: str, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The 202 body of every job create."""
    return {
        "job_id": job.id,
        "status": job.status,
        "poll_url": base_url.rstrip("/") + f"/api/v2/jobs/{job.id}",
        "images_to_generate": job.images_to_generate,
        "credits_reserved": job.credits_reserved,
        "credits_remaining": remaining,
        **(extra or {}),
    }


async def checked_webhook(resources: Resources, url: str | None) -> str | None:
    if url:
        await asyncio.to_thread(check_webhook_url, url, resources.settings)
    return url or None


def start_scene_job(
    session: Session,
    resources: Resources,
    user: User,
    *,
    input_key: str,
    count: int,
    category: str,
    base_url: str,
    product_id: str | None,
    webhook_url: str | None,
) -> dict[str, Any]:
    job, remaining = jobs.create_scene_job(
        session,
        resources,
        user_id=user.id,
        input_key=input_key,
        count=count,
        category=category,
        base_url=base_url,
        product_id=product_id,
        webhook_url=webhook_url,
    )
    return job_created(job, remaining, base_url, {"product_uuid": product_id})


@router.post("/generate/scenes", status_code=202, responses={202: {"model": JobCreated}})
async def generate_scenes(
    body: ScenesCreate, user: ApiKeyUser, resources: Res, request: Request
) -> JSONResponse:
    """Product photos in procedurally generated scenes for a saved product; 1 credit per scene,
    reserved now, unused credits returned when the job ends. Honours ``Idempotency-Key``."""
    attempt = idempotency.begin(
        resources.db,
        user.id,
        request.headers.get("Idempotency-Key"),
        request.url.path,
        body.model_dump(),
    )
    if attempt.stored is not None:
        return JSONResponse(attempt.stored.body, status_code=attempt.stored.status_code)
    webhook_url = await checked_webhook(resources, body.webhook_url)
    base_url = public_base_url(request, resources)

    def create(session: Session) -> dict[str, Any]:
        product = library.get_product(session, user.id, body.product_uuid)
        payload = start_scene_job(
            session,
            resources,
            user,
            input_key=product.image_key,
            count=body.num_scenes,
            category=library.normalise_category(body.category or product.category),
            base_url=base_url,
            product_id=product.id,
            webhook_url=webhook_url,
        )
        attempt.save(session, 202, payload)
        return payload

    return JSONResponse(await resources.db.transact(create), status_code=202)


@router.post("/generate/scenes-from-url", status_code=202, responses={202: {"model": JobCreated}})
async def generate_scenes_from_url(
    body: ScenesFromUrlCreate, user: ApiKeyUser, resources: Res, request: Request
) -> JSONResponse:
    """Fetch the image (SSRF-guarded), save it as a product, start a scene job; 1 credit per
    scene. Honours ``Idempotency-Key``."""
    attempt = idempotency.begin(
        resources.db,
        user.id,
        request.headers.get("Idempotency-Key"),
        request.url.path,
        body.model_dump(),
    )
    if attempt.stored is not None:
        return JSONResponse(attempt.stored.body, status_code=attempt.stored.status_code)
    webhook_url = await checked_webhook(resources, body.webhook_url)
    product_id = str(uuid.uuid4())
    saved = await save_image(
        resources, ImageSource("url", body.image_url), user, "products", product_id
    )
    filename = body.image_url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] or "product"
    # CPU work: off the event loop.
    description = await asyncio.to_thread(describe, saved.image.pixels)
    base_url = public_base_url(request, resources)

    def create(session: Session) -> dict[str, Any]:
        product = add_product(
            session,
            resources,
            user.id,
            saved,
            product_id=product_id,
            name=body.name or filename.rsplit(".", 1)[0] or "product",
            filename=filename[:255],
            category=body.category,
            description=description,
            description_given=False,
        )
        payload = start_scene_job(
            session,
            resources,
            user,
            input_key=product.image_key,
            count=body.num_scenes,
            category=product.category,
            base_url=base_url,
            product_id=product.id,
            webhook_url=webhook_url,
        )
        attempt.save(session, 202, payload)
        return payload

    return JSONResponse(await resources.db.transact(create), status_code=202)


class AvatarPhotoCreate(BaseModel):
    avatar_uuid: str = Field(description="a saved avatar")
    product_uuid: str = Field(description="a saved product")
    num_outputs: int = Field(6, ge=1, le=12, description="1 credit per image")
    prompt: str | None = Field(None, max_length=2000)
    webhook_url: str | None = None


def _avatar_photo(body: AvatarPhotoCreate, user: User, resources: Resources) -> None:
    """Product photos with an avatar need an avatar; none can be created on this server yet,
    so the lookup answers 404 (after the product, so a wrong product id is reported first).
    Nothing is reserved."""
    with resources.db.read() as session:
        library.get_product(session, user.id, body.product_uuid)
        library.get_avatar(session, user.id, body.avatar_uuid)
    raise InvalidInput("avatar photos are not available on this server yet")


@router.post("/generate/product-photo", status_code=202)
def generate_product_photo(
    body: AvatarPhotoCreate, user: ApiKeyUser, resources: Res
) -> dict[str, Any]:
    """The product worn or held by a saved avatar. Avatars cannot be created on this server
    yet, so this answers 404 for the avatar (a 4xx, never a charge)."""
    _avatar_photo(body, user, resources)
    return {}


@router.post("/generate/tryon", status_code=202)
def generate_tryon(body: AvatarPhotoCreate, user: ApiKeyUser, resources: Res) -> dict[str, Any]:
    """Virtual try-on of a clothing product on a saved avatar. Avatars cannot be created on
    this server yet, so this answers 404 for the avatar (a 4xx, never a charge)."""
    _avatar_photo(body, user, resources)
    return {}
