"""v2 jobs: ``POST /api/v2/jobs`` (a scene job from an uploaded product image), the job list
and the job status (poll until ``completed`` or ``failed``)."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from sqlalchemy.orm import Session

from pixelmill.api.deps import ApiKeyUser, Res
from pixelmill.api.idempotent import idempotent_create
from pixelmill.api.rendering import public_base_url
from pixelmill.errors import InvalidInput
from pixelmill.jobs import service as jobs
from pixelmill.jobs.lifecycle import JOB_STATES
from pixelmill.jobs.schemas import JobCreate, JobCreated, JobListItem, JobStatus
from pixelmill.library import service as library
from pixelmill.library.images import SavedImage, save_image
from pixelmill.operations.inputs import ImageSource
from pixelmill.webhooks.registry import checked_webhook_url

router = APIRouter(prefix="/api/v2", tags=["v2 jobs"])


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
    base_url = public_base_url(request, resources)

    async def prepare() -> tuple[str | None, SavedImage]:
        webhook_url = await checked_webhook_url(body.webhook_url, resources.settings)
        source = ImageSource("base64", body.product_image)
        saved = await save_image(
            resources.inputs, resources.library_storage, source, user, "inputs"
        )
        return webhook_url, saved

    def create(session: Session, prepared: tuple[str | None, SavedImage]) -> JobCreated:
        webhook_url, saved = prepared
        job, remaining = jobs.create_scene_job(
            session,
            resources.jobs,
            user_id=user.id,
            input_key=saved.key,
            count=body.images_to_generate,
            category=library.normalise_category(body.category),
            base_url=base_url,
            product_id=None,
            webhook_url=webhook_url,
        )
        return JobCreated.of(job, remaining, base_url)

    return await idempotent_create(
        request, resources.db, user, body, status_code=202, prepare=prepare, create=create
    )


@router.get("/jobs", response_model=list[JobListItem])
def list_jobs(
    user: ApiKeyUser,
    resources: Res,
    limit: int = Query(50, ge=1, le=200),
    offset: int = Query(0, ge=0, le=2**63 - 1),
    status_filter: str | None = Query(None, description=", ".join(JOB_STATES)),
) -> list[JobListItem]:
    """The account's jobs, newest first."""
    with resources.db.read() as session:
        rows = jobs.list_jobs(session, user.id, limit, offset, status_filter)
        return [JobListItem.model_validate(j) for j in rows]


@router.get("/jobs/{job_id}", response_model=JobStatus)
def get_job(job_id: str, user: ApiKeyUser, resources: Res, request: Request) -> JobStatus:
    """A job's status, progress, credits and results (fresh signed URLs)."""
    with resources.db.read() as session:
        job = jobs.get_job(session, user.id, job_id)
        return jobs.job_status(session, resources.signer, job, public_base_url(request, resources))
