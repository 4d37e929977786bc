"""v2 batches: up to 100 product images, ``images_per_product`` scenes each, run as one job
per image on one reservation; poll the batch or receive ``batch.completed``."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from pixelmill.api.deps import ApiKeyUser, BaseUrl, DbSession, ReadSession, Res
from pixelmill.api.idempotent import idempotent_create
from pixelmill.generation.requests import BatchRequest
from pixelmill.jobs import batches
from pixelmill.jobs.lifecycle import BATCH_STATES
from pixelmill.jobs.schemas import BatchCreate, BatchCreated, BatchListItem, BatchStatus

router = APIRouter(prefix="/api/v2", tags=["v2 batches"])


@router.post("/batches", status_code=202, responses={202: {"model": BatchCreated}})
async def create_batch(
    body: BatchCreate, user: ApiKeyUser, resources: Res, base_url: BaseUrl, request: Request
) -> JSONResponse:
    """Start a batch: ``len(images) * images_per_product`` credits reserved now; unused
    credits come back when the batch ends or is cancelled. Honours ``Idempotency-Key``."""
    create = BatchRequest(resources, user, base_url, body=body)
    return await idempotent_create(request, resources.db, user, body, 202, create)


@router.get("/batches", response_model=list[BatchListItem])
def list_batches(
    user: ApiKeyUser,
    session: ReadSession,
    limit: int = Query(20, ge=1, le=200),
    offset: int = Query(0, ge=0, le=2**63 - 1),
    status_filter: str | None = Query(None, description=", ".join(BATCH_STATES)),
) -> list[BatchListItem]:
    """The account's batches, newest first."""
    rows = batches.list_batches(session, user.id, limit, offset, status_filter)
    return [batches.batch_list_item(session, b) for b in rows]


@router.get("/batches/{batch_id}", response_model=BatchStatus)
def get_batch(
    batch_id: str,
    user: ApiKeyUser,
    resources: Res,
    base_url: BaseUrl,
    session: ReadSession,
    include_images: bool = True,
) -> BatchStatus:
    """A batch's status, progress counts (completed, failed, pending), credits and, with
    ``include_images``, every image's status and results."""
    batch = batches.get_batch(session, user.id, batch_id)
    return batches.batch_status(session, resources.signer, batch, base_url, include_images)


@router.post("/batches/{batch_id}/cancel", response_model=BatchStatus)
def cancel_batch(
    batch_id: str, user: ApiKeyUser, resources: Res, session: DbSession, base_url: BaseUrl
) -> BatchStatus:
    """Cancel a pending or processing batch: unfinished images stop, unused credits come back;
    the batch then reads ``completed`` with ``cancelled: true``."""
    batch = batches.cancel_batch(session, resources.jobs, user.id, batch_id)
    return batches.batch_status(session, resources.signer, batch, base_url, False)
