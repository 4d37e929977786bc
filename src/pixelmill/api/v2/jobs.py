"""v2 jobs: ``POST /api/v2/jobs`` (a scene job from an uploaded product image), the job list
and the job status (poll until ``completed`` or ``failed``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from pixelmill import idempotency
from pixelmill.api.deps import ApiKeyUser, Res
from pixelmill.api.rendering import public_base_url
from pixelmill.api.v2.generation import (
    JobCreated,
    JobListItem,
    JobStatus,
    checked_webhook,
    start_scene_job,
)
from pixelmill.errors import InvalidInput
from pixelmill.jobs import service as jobs
from pixelmill.jobs.lifecycle import JOB_STATES
from pixelmill.library import service as library
from pixelmill.library.images import save_image
from pixelmill.operations.pipeline import ImageSource

router = APIRouter(prefix="/api/v2", tags=["v2 jobs"])


class JobCreate(BaseModel):
    product_image: str = Field(min_length=1, description="the product image as plain base64")
    product_filename: str = Field("product.png", max_length=255)
    category: str = Field("other", description=", ".join(library.CATEGORIES))
    model_id: str | None = Field(None, description="not available on this server yet")
    model_url: str | None = Field(None, description="not available on this server yet")
    images_to_generate: int = Field(6, ge=1, le=12, description="1 credit per image")
    custom_prompt: str | None = Field(None, max_length=2000)
    webhook_url: str | None = None


@router.post("/jobs", status_code=202, responses={202: {"model": JobCreated}})
async def create_job(
    body: JobCreate, user: ApiKeyUser, resources: Res, request: Request
) -> JSONResponse:
    """Start a product-photo job: the product placed in ``images_to_generate`` generated
    scenes, 1 credit each. Model (avatar) photos are not available yet: ``model_id`` and
    ``model_url`` are refused with a 422. Honours ``Idempotency-Key``."""
    if body.model_id or body.model_url:
        raise InvalidInput(
            "model_id and model_url are not supported on this server yet (no model images "
            "exist); omit them to get product scene photos"
        )
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
    saved = await save_image(resources, ImageSource("base64", body.product_image), user, "inputs")
    base_url = public_base_url(request, resources)

    def create(session: Session) -> dict[str, Any]:
        payload = start_scene_job(
            session,
            resources,
            user,
            input_key=saved.key,
            count=body.images_to_generate,
            category=library.normalise_category(body.category),
            base_url=base_url,
            product_id=None,
            webhook_url=webhook_url,
        )
        attempt.save(session, 202, payload)
        return payload

    return JSONResponse(await resources.db.transact(create), status_code=202)


@router.get("/jobs", response_model=list[JobListItem])
def list_jobs(
    user: ApiKeyUser,
    resources: Res,
    limit: int = Query(50, ge=1, le=200),
    offset: int = Query(0, ge=0),
    status_filter: str | None = Query(None, description=", ".join(JOB_STATES)),
) -> list[dict[str, Any]]:
    """The account's jobs, newest first."""
    with resources.db.read() as session:
        rows = jobs.list_jobs(session, user.id, limit, offset, status_filter)
    return [
        {
            "job_id": j.id,
            "status": j.status,
            "type": j.kind,
            "images_to_generate": j.images_to_generate,
            "credits_used": j.credits_used,
            "batch_id": j.batch_id,
            "created_at": jobs.iso(j.created_at),
            "completed_at": jobs.iso(j.completed_at),
        }
        for j in rows
    ]


@router.get("/jobs/{job_id}", response_model=JobStatus)
def get_job(job_id: str, user: ApiKeyUser, resources: Res, request: Request) -> dict[str, Any]:
    """A job's status, progress, credits and results (fresh signed URLs)."""
    with resources.db.read() as session:
        job = jobs.get_job(session, user.id, job_id)
        return jobs.job_view(session, job, resources.signer, public_base_url(request, resources))
