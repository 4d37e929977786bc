"""The storefront app surface (bearer API key): the activity log
(``/api/v2/shopify/activities``) and product-enrichment jobs
(``/api/v2/shopify/enrichment-jobs``). Shapes: docs/storefront.md."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse

from pixelmill.api.deps import ApiKeyUser, BaseUrl, DbSession, ReadSession, Res
from pixelmill.api.idempotent import idempotent_create
from pixelmill.errors import InvalidInput
from pixelmill.storefront import activities
from pixelmill.storefront import service as storefront
from pixelmill.storefront.requests import EnrichmentRequest
from pixelmill.storefront.schemas import (
    ActivityCreate,
    ActivityDetail,
    ActivityList,
    ActivitySummary,
    ActivityType,
    EnrichmentJobCreate,
    EnrichmentJobCreated,
    EnrichmentJobDetail,
    EnrichmentJobList,
    JobDeleted,
    Status,
    normalise_shop_domain,
)
from pixelmill.storefront.service import JobPatch

router = APIRouter(prefix="/api/v2/shopify", tags=["v2 storefront"])

INT_MAX = 2**31 - 1
ActivityId = Annotated[int, Path(ge=1, le=INT_MAX, description="the activity's id")]
JobNumber = Annotated[int, Path(ge=1, le=INT_MAX, description="the job_id from the create")]
Count = Annotated[int | None, Query(ge=0, le=INT_MAX)]
ShopQuery = Annotated[str | None, Query(max_length=253, description="the shop's host name")]


def _shop(value: str | None) -> str | None:
    if not value:
        return None
    try:
        return normalise_shop_domain(value)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from exc


# ---- activities ---------------------------------------------------------------------------


@router.post("/activities", response_model=ActivityDetail)
def create_activity(body: ActivityCreate, user: ApiKeyUser, session: DbSession) -> ActivityDetail:
    """Log an activity (an enrichment operation that completed or failed, with each product's
    changes). Answers the record with its integer ``id``."""
    return activities.activity_detail(storefront.create_activity(session, user.id, body))


@router.get("/activities", response_model=ActivityList)
def list_activities(
    user: ApiKeyUser,
    session: ReadSession,
    shop_domain: ShopQuery = None,
    activity_type: ActivityType | None = None,
    status: Status | None = None,
    page: Annotated[int, Query(ge=1, le=INT_MAX)] = 1,
    per_page: Annotated[int, Query(ge=1, le=100)] = 10,
) -> ActivityList:
    """Newest first, with the total that match."""
    rows, total = activities.list_activities(
        session,
        user.id,
        shop_domain=_shop(shop_domain),
        activity_type=activity_type,
        status=status,
        page=page,
        per_page=per_page,
    )
    return ActivityList(
        activities=[activities.activity_out(r) for r in rows],
        total=total,
        page=page,
        per_page=per_page,
        pages=activities.pages(total, per_page),
    )


@router.get("/activities/summary", response_model=ActivitySummary)
def activity_summary(
    user: ApiKeyUser, session: ReadSession, shop_domain: ShopQuery = None
) -> ActivitySummary:
    """Completed activities, the products they processed, those that touched images."""
    return activities.activity_summary(session, user.id, _shop(shop_domain))


@router.get("/activities/{activity_id}", response_model=ActivityDetail)
def get_activity(activity_id: ActivityId, user: ApiKeyUser, session: ReadSession) -> ActivityDetail:
    """The activity with every product's change details."""
    return activities.activity_detail(activities.get_activity(session, user.id, activity_id))


@router.patch("/activities/{activity_id}", response_model=ActivityDetail)
def update_activity(
    activity_id: ActivityId,
    user: ApiKeyUser,
    session: DbSession,
    status: Status | None = None,
    error_message: Annotated[str | None, Query(max_length=4000)] = None,
) -> ActivityDetail:
    """Set the status (and the error message)."""
    row = activities.update_activity(session, user.id, activity_id, status, error_message)
    return activities.activity_detail(row)


# ---- enrichment jobs ----------------------------------------------------------------------


@router.post("/enrichment-jobs", response_model=EnrichmentJobCreated)
async def create_enrichment_job(
    body: EnrichmentJobCreate, user: ApiKeyUser, resources: Res, base_url: BaseUrl, request: Request
) -> JSONResponse:
    """Start an enrichment job over the products (inline, or library products by
    ``product_uuid``): every product × enrichment is reserved at its catalog price now and
    captured when delivered; poll ``poll_url``. ``run_by=app`` records a job the app runs
    itself (free; reported with PATCH). Honours ``Idempotency-Key``."""
    create = EnrichmentRequest(resources, user, base_url, body=body)
    return await idempotent_create(request, resources.db, user, body, 200, create)


@router.get("/enrichment-jobs", response_model=EnrichmentJobList)
def list_enrichment_jobs(
    user: ApiKeyUser,
    session: DbSession,
    resources: Res,
    base_url: BaseUrl,
    shop_domain: ShopQuery = None,
    status: Status | None = None,
    limit: Annotated[int, Query(ge=1, le=50)] = 10,
) -> EnrichmentJobList:
    """Newest first, with the total that match."""
    storefront.settle_account(session, resources.jobs, user.id)
    rows, total = storefront.list_enrichment_jobs(
        session, user.id, shop_domain=_shop(shop_domain), status=status, limit=limit
    )
    return EnrichmentJobList(
        jobs=[storefront.job_out(session, r, base_url) for r in rows], total=total, limit=limit
    )


@router.get("/enrichment-jobs/{job_id}", response_model=EnrichmentJobDetail)
def get_enrichment_job(
    job_id: JobNumber, user: ApiKeyUser, session: DbSession, resources: Res, base_url: BaseUrl
) -> EnrichmentJobDetail:
    """Status, counters and every product's results (fresh signed image URLs)."""
    row = storefront.get_enrichment_job(session, user.id, job_id)
    storefront.settle_if_done(session, resources.jobs, row)
    return storefront.job_detail(session, resources.signer, row, base_url)


@router.patch("/enrichment-jobs/{job_id}", response_model=EnrichmentJobDetail)
def update_enrichment_job(
    job_id: JobNumber,
    user: ApiKeyUser,
    session: DbSession,
    resources: Res,
    base_url: BaseUrl,
    status: Status | None = None,
    products_completed: Count = None,
    products_failed: Count = None,
    credits_used: Count = None,
    results_json: Annotated[str | None, Query(max_length=100_000)] = None,
    error_message: Annotated[str | None, Query(max_length=4000)] = None,
) -> EnrichmentJobDetail:
    """Report progress: an app-run job takes every field; a server-run job only
    ``status=failed`` (a cancel, unused credits released). ``credits_used`` is informational
    and never moves credits."""
    patch = JobPatch(
        status, products_completed, products_failed, credits_used, results_json, error_message
    )
    row = storefront.update_enrichment_job(session, resources.jobs, user.id, job_id, patch)
    return storefront.job_detail(session, resources.signer, row, base_url)


@router.delete("/enrichment-jobs/{job_id}", response_model=JobDeleted)
def delete_enrichment_job(
    job_id: JobNumber, user: ApiKeyUser, session: DbSession, resources: Res
) -> JobDeleted:
    """Delete the job, its results and its stored files (a running job is cancelled first and
    its unused credits released)."""
    return storefront.delete_enrichment_job(
        session, resources.jobs, resources.storage, user.id, job_id
    )
