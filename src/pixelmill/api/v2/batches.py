"""v2 batches: up to 100 product images, ``images_per_product`` scenes each, run as one job
per image on one reservation; poll the batch or receive ``batch.completed``."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from sqlalchemy.orm import Session

from pixelmill.api.deps import ApiKeyUser, DbSession, Res
from pixelmill.api.idempotent import idempotent_create
from pixelmill.api.rendering import public_base_url
from pixelmill.categories import normalise_category
from pixelmill.errors import InvalidInput
from pixelmill.jobs import batches
from pixelmill.jobs.lifecycle import BATCH_STATES
from pixelmill.jobs.schemas import BatchCreate, BatchCreated, BatchListItem, BatchStatus
from pixelmill.library.images import save_image
from pixelmill.operations.inputs import ImageSource
from pixelmill.webhooks.registry import checked_webhook_url

router = APIRouter(prefix="/api/v2", tags=["v2 batches"])


@router.post("/batches", status_code=202, responses={202: {"model": BatchCreated}})
async def create_batch(
    body: BatchCreate, user: ApiKeyUser, resources: Res, request: Request
) -> JSONResponse:
    """Start a batch: ``len(images) * images_per_product`` credits reserved now; unused
    credits come back when the batch ends or is cancelled. Honours ``Idempotency-Key``."""
    base = public_base_url(request, resources)

    async def prepare() -> tuple[str | None, list[batches.BatchItem]]:
        ids = [img.id for img in body.images]
        if len(set(ids)) != len(ids):
            raise InvalidInput("images[].id must be unique within a batch")
        webhook_url = await checked_webhook_url(body.webhook_url, resources.settings)
        items = []
        for img in body.images:
            source = ImageSource("base64", img.image)
            try:
                saved = await save_image(
                    resources.inputs, resources.library_storage, source, user, "inputs"
                )
            except InvalidInput as exc:
                raise InvalidInput(f"images[{img.id}]: {exc.message}") from exc
            category = normalise_category(img.category)
            items.append(batches.BatchItem(img.id, saved.key, category))
        return webhook_url, items

    def create(
        session: Session, prepared: tuple[str | None, list[batches.BatchItem]]
    ) -> BatchCreated:
        webhook_url, items = prepared
        batch, remaining = batches.create_batch(
            session,
            resources.jobs,
            user_id=user.id,
            items=items,
            per_item=body.images_per_product,
            base_url=base,
            webhook_url=webhook_url,
        )
        return BatchCreated.of(batch, remaining, base)

    def discard(prepared: tuple[str | None, list[batches.BatchItem]]) -> None:
        for item in prepared[1]:
            resources.library_storage.delete(item.input_key)

    return await idempotent_create(request, resources.db, user, body, 202, prepare, create, discard)


@router.get("/batches", response_model=list[BatchListItem])
def list_batches(
    user: ApiKeyUser,
    resources: Res,
    limit: int = Query(20, ge=1, le=200),
    offset: int = Query(0, ge=0, le=2**63 - 1),
    status_filter: str | None = Query(None, description=", ".join(BATCH_STATES)),
) -> list[BatchListItem]:
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
) -> BatchStatus:
    """A batch's status, progress counts (completed, failed, pending), credits and, with
    ``include_images``, every image's status and results."""
    base = public_base_url(request, resources)
    with resources.db.read() as session:
        batch = batches.get_batch(session, user.id, batch_id)
        return batches.batch_status(session, resources.signer, batch, base, include_images)


@router.post("/batches/{batch_id}/cancel", response_model=BatchStatus)
def cancel_batch(
    batch_id: str, user: ApiKeyUser, resources: Res, session: DbSession, request: Request
) -> BatchStatus:
    """Cancel a pending or processing batch: unfinished images stop, unused credits come back;
    the batch then reads ``completed`` with ``cancelled: true``."""
    batch = batches.cancel_batch(session, resources.jobs, user.id, batch_id)
    base = public_base_url(request, resources)
    return batches.batch_status(session, resources.signer, batch, base, False)
