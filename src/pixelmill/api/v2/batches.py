"""v2 batches: up to 100 product images, ``images_per_product`` scenes each, run as one job
per image on one reservation; poll the batch or receive ``batch.completed``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from pixelmill import idempotency
from pixelmill.api.deps import ApiKeyUser, DbSession, Res
from pixelmill.api.rendering import public_base_url
from pixelmill.api.v2.generation import checked_webhook
from pixelmill.errors import InvalidInput
from pixelmill.jobs import batches
from pixelmill.jobs.lifecycle import BATCH_STATES
from pixelmill.library import service as library
from pixelmill.library.images import save_image
from pixelmill.operations.pipeline import ImageSource

router = APIRouter(prefix="/api/v2", tags=["v2 batches"])


class BatchImage(BaseModel):
    id: str = Field(min_length=1, max_length=255, description="your own identifier (SKU)")
    image: str = Field(min_length=1, description="base64 image")
    category: str | None = None


class BatchCreate(BaseModel):
    images: list[BatchImage] = Field(min_length=1, max_length=100)
    images_per_product: int = Field(6, ge=1, le=12)
    webhook_url: str | None = None


class BatchCreated(BaseModel):
    batch_id: str
    status: str
    total_images: int
    images_to_generate: int
    credits_reserved: int
    credits_remaining: int
    poll_url: str


class BatchProgress(BaseModel):
    completed: int
    failed: int
    pending: int
    total: int


class BatchImageResult(BaseModel):
    scene: str
    url: str


class BatchImageStatus(BaseModel):
    id: str | None = Field(description="the caller's id of the image")
    job_id: str
    status: str
    error: str | None
    results: list[BatchImageResult]


class BatchStatus(BaseModel):
    """A batch's state; ``completed`` is final (``cancelled`` tells a cancelled batch)."""

    batch_id: str
    status: str = Field(description="pending, processing or completed")
    cancelled: bool
    progress: BatchProgress
    total_images: int
    images_per_product: int
    credits_reserved: int
    credits_used: int
    created_at: str | None
    started_at: str | None
    completed_at: str | None
    images: list[BatchImageStatus]


class BatchListItem(BaseModel):
    batch_id: str
    status: str
    cancelled: bool
    total_images: int
    progress: BatchProgress
    credits_reserved: int
    credits_used: int
    created_at: str | None
    completed_at: str | None


@router.post("/batches", status_code=202, responses={202: {"model": BatchCreated}})
async def create_batch(
    body: BatchCreate, user: ApiKeyUser, resources: Res, request: Request
) -> JSONResponse:
    """Start a batch: ``len(images) * images_per_product`` credits reserved now; unused
    credits come back when the batch ends or is cancelled. Honours ``Idempotency-Key``."""
    attempt = idempotency.begin(
        resources.db,
        user.id,
        request.headers.get("Idempotency-Key"),
        request.url.path,
        body.model_dump(),
    )
    if attempt.stored is not None:
        return JSONResponse(attempt.stored.body, status_code=attempt.stored.status_code)
    ids = [img.id for img in body.images]
    if len(set(ids)) != len(ids):
        raise InvalidInput("images[].id must be unique within a batch")
    webhook_url = await checked_webhook(resources, body.webhook_url)
    items = []
    for img in body.images:
        try:
            saved = await save_image(resources, ImageSource("base64", img.image), user, "inputs")
        except InvalidInput as exc:
            raise InvalidInput(f"images[{img.id}]: {exc.message}") from exc
        items.append(batches.BatchItem(img.id, saved.key, library.normalise_category(img.category)))
    base = public_base_url(request, resources)

    def create(session: Session) -> dict[str, Any]:
        batch, remaining = batches.create_batch(
            session,
            resources,
            user_id=user.id,
            items=items,
            per_item=body.images_per_product,
            base_url=base,
            webhook_url=webhook_url,
        )
        payload = {
            "batch_id": batch.id,
            "status": batch.status,
            "total_images": batch.total_images,
            "images_to_generate": batch.total_images * batch.images_per_product,
            "credits_reserved": batch.credits_reserved,
            "credits_remaining": remaining,
            "poll_url": base.rstrip("/") + f"/api/v2/batches/{batch.id}",
        }
        attempt.save(session, 202, payload)
        return payload

    return JSONResponse(await resources.db.transact(create), status_code=202)


@router.get("/batches", response_model=list[BatchListItem])
def list_batches(
    user: ApiKeyUser,
    resources: Res,
    limit: int = Query(20, ge=1, le=200),
    offset: int = Query(0, ge=0),
    status_filter: str | None = Query(None, description=", ".join(BATCH_STATES)),
) -> list[dict[str, Any]]:
    """The account's batches, newest first."""
    with resources.db.read() as session:
        return [
            batches.batch_list_item(session, b)
            for b in batches.list_batches(session, user.id, limit, offset, status_filter)
        ]


@router.get("/batches/{batch_id}", response_model=BatchStatus)
def get_batch(
    batch_id: str,
    user: ApiKeyUser,
    resources: Res,
    request: Request,
    include_images: bool = True,
) -> dict[str, Any]:
    """A batch's status, progress counts (completed, failed, pending), credits and, with
    ``include_images``, every image's status and results."""
    with resources.db.read() as session:
        batch = batches.get_batch(session, user.id, batch_id)
        return batches.batch_view(
            session, batch, resources.signer, public_base_url(request, resources), include_images
        )


@router.post("/batches/{batch_id}/cancel", response_model=BatchStatus)
def cancel_batch(
    batch_id: str, user: ApiKeyUser, resources: Res, session: DbSession, request: Request
) -> dict[str, Any]:
    """Cancel a pending or processing batch: unfinished images stop, unused credits come back;
    the batch then reads ``completed`` with ``cancelled: true``."""
    batch = batches.cancel_batch(session, resources, user.id, batch_id)
    return batches.batch_view(
        session, batch, resources.signer, public_base_url(request, resources), False
    )
