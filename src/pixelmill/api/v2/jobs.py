"""v2 jobs: ``POST /api/v2/jobs`` (a scene job from an uploaded product image), the job list
and the job status (poll until ``completed`` or ``failed``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse

from pixelmill.api.deps import ApiKeyUser, BaseUrl, DbSession, ReadSession, Res
from pixelmill.api.idempotent import idempotent_create
from pixelmill.generation.requests import ProductJobRequest
from pixelmill.jobs import service as jobs
from pixelmill.jobs.lifecycle import JOB_STATES
from pixelmill.jobs.schemas import JobCreate, JobCreated, JobListItem, JobStatus

router = APIRouter(prefix="/api/v2", tags=["v2 jobs"])


@router.post("/jobs", status_code=202, responses={202: {"model": JobCreated}})
async def create_job(
    body: JobCreate, user: ApiKeyUser, resources: Res, base_url: BaseUrl, request: Request
) -> JSONResponse:
    """Start a product-photo job from an uploaded product image, 1 credit per image. Without a
    model: the product in ``images_to_generate`` generated scenes. With ``model_id`` (a public
    model from ``GET /api/v2/avatars/public`` or one of your avatar UUIDs) or ``model_url`` (a
    photo of a person): the product with that person, a try-on when ``category`` is
    ``clothing``, scenes steered by ``custom_prompt``. Honours ``Idempotency-Key``."""
    create = ProductJobRequest(resources, user, base_url, body=body)
    return await idempotent_create(request, resources.db, user, body, 202, create)


@router.get("/jobs", response_model=list[JobListItem])
def list_jobs(
    user: ApiKeyUser,
    session: ReadSession,
    limit: int = Query(50, ge=1, le=200),
    offset: int = Query(0, ge=0, le=2**63 - 1),
    status_filter: str | None = Query(None, description=", ".join(JOB_STATES)),
) -> list[JobListItem]:
    """The account's jobs, newest first."""
    rows = jobs.list_jobs(session, user.id, limit, offset, status_filter)
    return [JobListItem.model_validate(j) for j in rows]


@router.get("/jobs/{job_id}", response_model=JobStatus)
def get_job(
    job_id: str, user: ApiKeyUser, resources: Res, base_url: BaseUrl, session: ReadSession
) -> JobStatus:
    """A job's status, progress, credits and results (fresh signed URLs)."""
    job = jobs.get_job(session, user.id, job_id)
    return jobs.job_status(session, resources.signer, job, base_url)


@router.post("/jobs/{job_id}/cancel", response_model=JobStatus)
def cancel_job(
    job_id: Annotated[str, Path(max_length=64)],
    user: ApiKeyUser,
    resources: Res,
    session: DbSession,
    base_url: BaseUrl,
) -> JobStatus:
    """Cancel a pending, queued or processing job (an extension: the interface defines only the
    batch cancel). The job ends ``failed`` with error ``cancelled``; a running job stops before
    its next result (what it delivered stays charged), a routed provider's work is cancelled,
    the unused credits come back at once. 409 when the job has already ended."""
    job = jobs.cancel_job(session, resources.jobs, user.id, job_id)
    return jobs.job_status(session, resources.signer, job, base_url)
