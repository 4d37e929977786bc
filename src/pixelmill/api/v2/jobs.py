"""v2 jobs: ``POST /api/v2/jobs`` (a scene job from an uploaded product image), the job list
and the job status (poll until ``completed`` or ``failed``)."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from sqlalchemy.orm import Session

from pixelmill.api.deps import ApiKeyUser, DbSession, Res
from pixelmill.api.idempotent import idempotent_create
from pixelmill.api.rendering import public_base_url
from pixelmill.api.v2.people import check_person, gallery_model_person
from pixelmill.categories import normalise_category
from pixelmill.engines.avatar import gallery_model
from pixelmill.errors import InvalidInput, NotFound
from pixelmill.generation import service as generation
from pixelmill.generation.service import Model, people_kind
from pixelmill.jobs import service as jobs
from pixelmill.jobs.lifecycle import JOB_STATES
from pixelmill.jobs.schemas import JobCreate, JobCreated, JobListItem, JobStatus
from pixelmill.library import service as library
from pixelmill.library.images import SavedImage, save_image
from pixelmill.operations.catalog import CATALOG
from pixelmill.operations.inputs import ImageSource
from pixelmill.operations.params import engine_for, parse_params
from pixelmill.webhooks.registry import checked_webhook_url

router = APIRouter(prefix="/api/v2", tags=["v2 jobs"])


@router.post("/jobs", status_code=202, responses={202: {"model": JobCreated}})
async def create_job(
    body: JobCreate, user: ApiKeyUser, resources: Res, request: Request
) -> JSONResponse:
    """Start a product-photo job from an uploaded product image, 1 credit per image. Without a
    model: the product in ``images_to_generate`` generated scenes. With ``model_id`` (a public
    model from ``GET /api/v2/avatars/public`` or one of your avatar UUIDs) or ``model_url`` (a
    photo of a person): the product with that person, a try-on when ``category`` is
    ``clothing``, scenes steered by ``custom_prompt``. Honours ``Idempotency-Key``."""
    if body.model_id and body.model_url:
        raise InvalidInput("Give model_id or model_url, not both")
    base_url = public_base_url(request, resources)
    category = normalise_category(body.category)

    async def prepare() -> tuple[str | None, SavedImage, Model | None]:
        webhook_url = await checked_webhook_url(body.webhook_url, resources.settings)
        source = ImageSource("base64", body.product_image)
        saved = await save_image(
            resources.inputs, resources.library_storage, source, user, "inputs"
        )
        try:
            return webhook_url, saved, await model_for_job()
        except Exception:
            await asyncio.to_thread(resources.library_storage.delete, saved.key)
            raise

    async def model_for_job() -> Model | None:
        if body.model_url:
            photo = await save_image(
                resources.inputs,
                resources.library_storage,
                ImageSource("url", body.model_url),
                user,
                "inputs",
            )
            await check_person(resources, photo, "model_url")
            return Model(photo.key, own=True)
        if body.model_id and (public := gallery_model(body.model_id)) is not None:
            return await gallery_model_person(resources, public)
        return None  # no model, or one of the account's avatars (read in the transaction)

    def create(
        session: Session, prepared: tuple[str | None, SavedImage, Model | None]
    ) -> JobCreated:
        webhook_url, saved, model = prepared
        if model is None and body.model_id:
            try:
                model = Model.of(library.get_avatar(session, user.id, body.model_id))
            except NotFound as exc:
                raise NotFound(
                    "model_id is neither a public model (GET /api/v2/avatars/public) nor one "
                    "of your avatars"
                ) from exc
        if model is None:
            job, remaining = jobs.create_scene_job(
                session,
                resources.jobs,
                user_id=user.id,
                input_key=saved.key,
                count=body.images_to_generate,
                category=category,
                base_url=base_url,
                webhook_url=webhook_url,
            )
            created = JobCreated.of(job, remaining, base_url)
            if body.custom_prompt:
                created.warnings = [
                    "custom_prompt is not used by scene jobs (scenes follow the category); "
                    "give model_id or model_url for prompt-steered photos"
                ]
            return created
        kind = people_kind(category)
        engine = engine_for(resources.engines, CATALOG[kind])
        raw = {
            "num_outputs": body.images_to_generate,
            "prompt": body.custom_prompt,
            "category": category,
        }
        job, remaining = generation.create_people_job(
            session,
            resources.jobs,
            kind,
            parse_params(engine, raw),
            user_id=user.id,
            count=body.images_to_generate,
            input_key=saved.key,
            category=category,
            model=model,
            prompt=body.custom_prompt,
            base_url=base_url,
            webhook_url=webhook_url,
        )
        return JobCreated.of(job, remaining, base_url)

    def discard(prepared: tuple[str | None, SavedImage, Model | None]) -> None:
        _, saved, model = prepared
        resources.library_storage.delete(saved.key)
        if model is not None and model.own:
            resources.library_storage.delete(model.image_key)

    return await idempotent_create(request, resources.db, user, body, 202, prepare, create, discard)


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


@router.post("/jobs/{job_id}/cancel", response_model=JobStatus)
def cancel_job(
    job_id: Annotated[str, Path(max_length=64)],
    user: ApiKeyUser,
    resources: Res,
    session: DbSession,
    request: Request,
) -> JobStatus:
    """Cancel a pending, queued or processing job (an extension: the interface defines only the
    batch cancel). The job ends ``failed`` with error ``cancelled``; a running job stops before
    its next result (what it delivered stays charged), a routed provider's work is cancelled,
    the unused credits come back at once. 409 when the job has already ended."""
    job = jobs.cancel_job(session, resources.jobs, user.id, job_id)
    return jobs.job_status(session, resources.signer, job, public_base_url(request, resources))
