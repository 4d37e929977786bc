"""The storefront's enrichment jobs, per account (every read starts from
:func:`_owned_enrichment_jobs`: another account's id is a 404), and within an account per shop
(``shop_domain``); the activity log is :mod:`pixelmill.storefront.activities`.

A server-run enrichment job is a ``jobs`` row of kind ``enrichment`` (status, reservation,
delivered files: :mod:`pixelmill.jobs`, read through its service) plus its ``enrichment_jobs``
row (the products' states, the counters). In the transaction that ends the job (its kind's
terminal hook, :func:`settle_job`), :func:`settle` (once) fails what was never run, logs the
activity and emits ``enrichment_job.completed`` / ``.failed``. An app-run job has no
``jobs`` row: the app moves it with PATCH and the server keeps the record (no credits).

Functions take the caller's session first and never commit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import Select, and_, case, func, select, update
from sqlalchemy.orm import Session

from pixelmill.credits import ledger
from pixelmill.db.base import utcnow
from pixelmill.db.models import EnrichmentJob, Job, StorefrontActivity, draw_number
from pixelmill.errors import Conflict, InvalidInput, NotFound
from pixelmill.jobs import service as jobs
from pixelmill.jobs.lifecycle import ACTIVE, FAILED, PROCESSING, QUEUED, TERMINAL
from pixelmill.jobs.service import JobBackends
from pixelmill.queue import run_after_commit
from pixelmill.schemas import iso
from pixelmill.storage import ObjectStorage, UrlSigner
from pixelmill.storefront.activities import log_activity, text
from pixelmill.storefront.enrichment import (
    KIND,
    fail_pending,
    item_names,
    job_price,
    new_product_state,
)
from pixelmill.storefront.schemas import (
    ActivityCreate,
    EnrichmentJobCreate,
    EnrichmentJobDetail,
    EnrichmentJobOut,
    JobDeleted,
    ProductErrorOut,
    ProductImageOut,
    ProductResultOut,
)
from pixelmill.webhooks import delivery as webhooks

CANCELLED = "cancelled: the enrichment job was deleted"
APP_TRANSITIONS: dict[str, frozenset[str]] = {
    "pending": frozenset({"processing", "completed", "failed"}),
    "processing": frozenset({"completed", "failed"}),
    "completed": frozenset(),
    "failed": frozenset(),
}


def _owned_enrichment_jobs(user_id: int) -> Select[EnrichmentJob]:
    """Every read of enrichment jobs starts here."""
    return select(EnrichmentJob).where(EnrichmentJob.user_id == user_id)


# ---- activities ---------------------------------------------------------------------------


def create_activity(session: Session, user_id: int, body: ActivityCreate) -> StorefrontActivity:
    """``POST /api/v2/shopify/activities``: an app's own record (its ``job_id``, when given,
    must be one of the account's enrichment jobs)."""
    if body.job_id is not None:
        get_enrichment_job(session, user_id, body.job_id)
    return log_activity(
        session,
        user_id,
        shop_domain=body.shop_domain,
        activity_type=body.activity_type,
        status=body.status,
        products=[p.model_dump(mode="json") for p in body.products],
        credits_used=body.credits_used,
        error_message=body.error_message,
        job_id=body.job_id,
    )


# ---- enrichment jobs: creating ------------------------------------------------------------


@dataclass(frozen=True)
class PreparedProduct:
    """A product of a create request with its image source resolved: ``("url", url)``,
    ``("stored", key)`` (a base64 upload stored for the job, or a library product's image),
    or no image."""

    id: str
    title: str
    description: str
    tags: list[str]
    source_kind: str | None = None
    source_value: str | None = None
    category: str = "other"

    def as_params(self) -> dict[str, Any]:
        source = {"kind": self.source_kind, "value": self.source_value} if self.source_kind else {}
        return {
            "id": self.id,
            "title": self.title,
            "description": self.description,
            "tags": self.tags,
            "category": self.category,
            "source": source,
        }


def create_enrichment_job(
    session: Session,
    backends: JobBackends,
    body: EnrichmentJobCreate,
    products: Sequence[PreparedProduct],
    *,
    user_id: int,
    base_url: str,
    webhook_url: str | None,
    max_bytes: int,
    own_inputs: Sequence[str] = (),
    test: bool,
) -> tuple[EnrichmentJob, int]:
    """Write the job: a server-run job reserves every item's catalog price now (402 when the
    balance is short; nothing for a test key's: ``test``) and is dispatched after the commit;
    an app-run job is only recorded. Returns the row and the balance left."""
    image_ops = [o.model_dump() for o in body.image_operations or []]
    names = item_names(body.enrichments, image_ops)
    states = [new_product_state(p.id, p.title, p.description, p.tags, names) for p in products]
    now = utcnow()
    row = EnrichmentJob(
        user_id=user_id,
        shop_domain=body.shop_domain,
        run_by=body.run_by,
        status="pending",
        enrichments=list(body.enrichments),
        image_operations=image_ops,
        products=states,
        products_total=len(products),
        products_completed=0,
        products_failed=0,
        credits_reserved=0,
        credits_used=0,
        webhook_url=webhook_url,
        created_at=now,
        updated_at=now,
    )
    if body.run_by == "app":
        row.id = draw_number(session, "job")
        session.add(row)
        session.flush()
        return row, ledger.balance(session, user_id)
    count, price = job_price(len(products), body.enrichments, image_ops)
    params = {
        "shop_domain": body.shop_domain,
        "enrichments": list(body.enrichments),
        "image_operations": image_ops,
        "products": [p.as_params() for p in products],
        "max_bytes": max_bytes,
        "own_inputs": list(own_inputs),
    }
    job, remaining = jobs.create_job(
        session,
        backends,
        user_id=user_id,
        kind=KIND,
        count=count,
        price=price,
        base_url=base_url,
        params=params,
        numbered=True,
        test=test,
    )
    assert job.number is not None
    row.id = job.number
    row.job_id = job.id
    row.credits_reserved = job.credits_reserved
    session.add(row)
    session.flush()
    return row, remaining


# ---- enrichment jobs: reading -------------------------------------------------------------


def _public_status(job_status: str, settled: bool) -> str:
    """The storefront's four states: a ``queued`` job is still ``pending``, and a run that
    ended is still ``processing`` until the job is settled, so that ``completed`` or
    ``failed`` is never read without the activity and results that settling writes."""
    if job_status == QUEUED:
        return "pending"
    if job_status in TERMINAL and not settled:
        return PROCESSING
    return job_status


_job_status = jobs.status_of_job(EnrichmentJob.job_id)
_status_expr = case(
    (EnrichmentJob.job_id.is_(None), EnrichmentJob.status),
    (_job_status == QUEUED, "pending"),
    (and_(_job_status.in_(TERMINAL), EnrichmentJob.settled_at.is_(None)), PROCESSING),
    else_=func.coalesce(_job_status, EnrichmentJob.status),
)


def get_enrichment_job(
    session: Session, user_id: int, number: int, lock: bool = False
) -> EnrichmentJob:
    stmt = _owned_enrichment_jobs(user_id).where(EnrichmentJob.id == number)
    row = session.scalar(stmt.with_for_update() if lock else stmt)
    if row is None:
        raise NotFound("Enrichment job not found")
    return row


def status_of(session: Session, row: EnrichmentJob) -> tuple[str, Job | None]:
    if row.job_id is None:
        return row.status, None
    job = jobs.find_job(session, row.job_id)
    if job is None:
        return row.status, None
    return _public_status(job.status, row.settled_at is not None), job


def list_enrichment_jobs(
    session: Session, user_id: int, *, shop_domain: str | None, status: str | None, limit: int
) -> tuple[Sequence[EnrichmentJob], int]:
    stmt = _owned_enrichment_jobs(user_id)
    if shop_domain:
        stmt = stmt.where(EnrichmentJob.shop_domain == shop_domain)
    if status:
        stmt = stmt.where(_status_expr == status)
    total = int(
        session.scalar(
            select(func.count()).select_from(stmt.with_only_columns(EnrichmentJob.id).subquery())
        )
        or 0
    )
    rows = session.scalars(
        stmt.order_by(EnrichmentJob.created_at.desc(), EnrichmentJob.id.desc()).limit(limit)
    ).all()
    return rows, total


def poll_url(base_url: str, number: int) -> str:
    return f"{base_url.rstrip('/')}/api/v2/shopify/enrichment-jobs/{number}"


def product_results(row: EnrichmentJob, signer: UrlSigner, base_url: str) -> list[ProductResultOut]:
    base = base_url.rstrip("/")
    out = []
    for p in row.products:
        result = p.get("result", {})
        out.append(
            ProductResultOut(
                id=p["id"],
                title=p["title"],
                status=p["status"],
                description=result.get("description"),
                tags=result.get("tags"),
                alt_text=result.get("alt_text"),
                images=[
                    ProductImageOut(
                        operation=i["operation"],
                        label=i["label"],
                        url=base + signer.path_for(i["key"]),
                    )
                    for i in p.get("images", [])
                ],
                errors=[ProductErrorOut(**e) for e in p.get("errors", [])],
                method=p.get("method"),
                credits_used=int(p.get("credits_used", 0)),
            )
        )
    return out


def _job_fields(session: Session, row: EnrichmentJob, base_url: str) -> dict[str, Any]:
    status, job = status_of(session, row)
    return {
        "job_id": row.id,
        "shop_domain": row.shop_domain,
        "status": status,
        "run_by": row.run_by,
        "enrichments": row.enrichments,
        "image_operations": row.image_operations,
        "products_total": row.products_total,
        "products_completed": row.products_completed,
        "products_failed": row.products_failed,
        "credits_reserved": row.credits_reserved,
        "credits_used": job.credits_used if job is not None else row.credits_used,
        "error_message": (job.error if job is not None and job.error else row.error_message),
        "activity_id": row.activity_id,
        "poll_url": poll_url(base_url, row.id),
        "created_at": row.created_at,
        "updated_at": max(row.updated_at, job.updated_at) if job is not None else row.updated_at,
        "completed_at": row.completed_at
        if job is None or status not in TERMINAL
        else job.completed_at,
    }


def job_out(session: Session, row: EnrichmentJob, base_url: str) -> EnrichmentJobOut:
    return EnrichmentJobOut(**_job_fields(session, row, base_url), results_json=row.results_json)


def job_detail(
    session: Session, signer: UrlSigner, row: EnrichmentJob, base_url: str
) -> EnrichmentJobDetail:
    results = product_results(row, signer, base_url)
    results_json = row.results_json
    if row.run_by == "server":
        results_json = json.dumps([r.model_dump(mode="json") for r in results])
    fields = _job_fields(session, row, base_url)
    return EnrichmentJobDetail(**fields, results_json=results_json, results=results)


# ---- enrichment jobs: settling, updating, deleting ----------------------------------------


def _activity_products(row: EnrichmentJob) -> list[dict[str, Any]]:
    out = []
    for p in row.products:
        before = p.get("before", {})
        changes: list[dict[str, Any]] = []
        for name, value in p.get("result", {}).items():
            prior = before.get(name) if name in ("description", "tags") else None
            changes.append({"field": name, "before": prior, "after": value})
        if p.get("images"):
            shown = [{"operation": i["operation"], "label": i["label"]} for i in p["images"]]
            changes.append({"field": "images", "before": None, "after": shown})
        out.append({"id": p["id"], "title": p["title"], "changes": changes})
    return out


def _activity_type(row: EnrichmentJob) -> str:
    kinds = set(row.enrichments)
    if len(kinds) == 1:
        only = next(iter(kinds))
        return {"description": "description", "tags": "tags", "images": "images"}.get(
            only, "enrichment"
        )
    return "enrichment"


def settle(
    session: Session, backends: JobBackends, row: EnrichmentJob, status: str, error: str | None
) -> bool:
    """Once per job, when it reached ``completed`` or ``failed``: what never ran is failed,
    the activity is logged and ``enrichment_job.<status>`` emitted (to the job's
    ``webhook_url``, else the account's endpoints). False when it was settled already."""
    now = utcnow()
    won = session.execute(
        update(EnrichmentJob)
        .where(EnrichmentJob.id == row.id, EnrichmentJob.settled_at.is_(None))
        .values(settled_at=now)
        .returning(EnrichmentJob.id)
    ).first()
    session.refresh(row)  # as settled by whoever won (a loser waited for its commit)
    if won is None:
        return False
    if row.run_by == "server":
        fail_pending(row, error or "not run: the job ended first")
        job = jobs.find_job(session, row.job_id) if row.job_id else None
        if job is not None:
            row.credits_used = job.credits_used
        row.error_message = error or row.error_message
        row.status = status
        row.completed_at = now
    activity = log_activity(
        session,
        row.user_id,
        shop_domain=row.shop_domain,
        activity_type=_activity_type(row),
        status=status,
        products=_activity_products(row),
        credits_used=row.credits_used,
        error_message=row.error_message,
        job_id=row.id,
    )
    row.activity_id = activity.id
    row.updated_at = now
    session.flush()
    base_url = backends_base_url(session, row)
    payload: dict[str, Any] = {
        "event": f"enrichment_job.{status}",
        "job_id": row.id,
        "shop_domain": row.shop_domain,
        "status": status,
        "products_total": row.products_total,
        "products_completed": row.products_completed,
        "products_failed": row.products_failed,
        "credits_used": row.credits_used,
        "activity_id": activity.id,
        "poll_url": poll_url(base_url, row.id),
        "timestamp": iso(now),
    }
    if row.run_by == "server":
        payload["results"] = [
            r.model_dump(mode="json") for r in product_results(row, backends.signer, base_url)
        ]
    if row.error_message:
        payload["error"] = row.error_message
    webhooks.emit(
        session,
        backends.queue,
        row.user_id,
        f"enrichment_job.{status}",
        payload,
        row.webhook_url,
    )
    return True


def backends_base_url(session: Session, row: EnrichmentJob) -> str:
    job = jobs.find_job(session, row.job_id) if row.job_id else None
    return job.base_url if job is not None else ""


def settle_if_done(session: Session, backends: JobBackends, row: EnrichmentJob) -> bool:
    """Settle a server-run job whose ``jobs`` row is terminal and which was not settled yet
    (the terminal hook does it as the job ends; this catches a job that ended before the
    hook existed)."""
    if row.settled_at is not None or row.job_id is None:
        return False
    job = jobs.find_job(session, row.job_id)
    if job is None or job.status not in TERMINAL:
        return False
    return settle(session, backends, row, job.status, job.error)


def settle_job(session: Session, backends: JobBackends, job: Job) -> bool:
    """The ``enrichment`` kind's terminal hook: settle the job's row in the transaction that
    ended the job."""
    row = session.scalar(select(EnrichmentJob).where(EnrichmentJob.job_id == job.id))
    return False if row is None else settle_if_done(session, backends, row)


def settle_account(session: Session, backends: JobBackends, user_id: int) -> None:
    """Settle the account's server-run jobs that ended unseen (before a list reads them)."""
    rows = session.scalars(
        _owned_enrichment_jobs(user_id).where(
            EnrichmentJob.settled_at.is_(None), _job_status.in_(TERMINAL)
        )
    ).all()
    for row in rows:
        settle_if_done(session, backends, row)


@dataclass(frozen=True)
class JobPatch:
    status: str | None = None
    products_completed: int | None = None
    products_failed: int | None = None
    credits_used: int | None = None
    results_json: str | None = None
    error_message: str | None = None

    def progress_given(self) -> list[str]:
        return [
            name
            for name in ("products_completed", "products_failed", "credits_used", "results_json")
            if getattr(self, name) is not None
        ]


def update_enrichment_job(
    session: Session, backends: JobBackends, user_id: int, number: int, patch: JobPatch
) -> EnrichmentJob:
    """``PATCH .../enrichment-jobs/{id}``. An app-run job takes every field (``status``
    along ``pending -> processing -> completed | failed``; a terminal job only takes its own
    status again; counters within ``products_total``; ``credits_used`` is the app's own figure
    and never touches the ledger). A server-run job's progress is the server's: it takes only
    ``status=failed`` (a cancel: unused credits released) with an ``error_message``."""
    row = get_enrichment_job(session, user_id, number, lock=True)
    if patch.results_json is not None:
        try:
            json.loads(patch.results_json)
        except ValueError as exc:
            raise InvalidInput(f"results_json is not JSON: {exc}") from exc
    if row.run_by == "server":
        return _patch_server_job(session, backends, row, patch)
    current = row.status
    if patch.status not in (None, current) and patch.status not in APP_TRANSITIONS[current]:
        raise Conflict(f"The job is {current}; it cannot move to {patch.status}")
    if current in TERMINAL and patch.progress_given():
        raise Conflict(f"The job is {current}; its progress can no longer change")
    completed = (
        row.products_completed if patch.products_completed is None else patch.products_completed
    )
    failed = row.products_failed if patch.products_failed is None else patch.products_failed
    if completed + failed > row.products_total:
        raise InvalidInput(
            f"products_completed + products_failed ({completed + failed}) exceeds the job's "
            f"{row.products_total} products"
        )
    row.products_completed, row.products_failed = completed, failed
    if patch.credits_used is not None:
        row.credits_used = patch.credits_used
    if patch.results_json is not None:
        row.results_json = patch.results_json
    if patch.error_message is not None:
        row.error_message = text(patch.error_message)
    row.updated_at = utcnow()
    if patch.status is not None and patch.status != current:
        row.status = patch.status
        if patch.status in TERMINAL:
            row.completed_at = row.updated_at
            session.flush()
            settle(session, backends, row, patch.status, row.error_message)
    session.flush()
    return row


def _patch_server_job(
    session: Session, backends: JobBackends, row: EnrichmentJob, patch: JobPatch
) -> EnrichmentJob:
    given = patch.progress_given()
    if given:
        raise Conflict(
            f"{', '.join(given)}: the progress of a server-run job is kept by the server "
            "(create the job with run_by=app to report your own)"
        )
    status, job = status_of(session, row)
    if patch.status is None or patch.status == status:
        if patch.error_message is not None and patch.status is None:
            raise Conflict("error_message is accepted with status=failed (a cancel)")
        return row
    if patch.status != FAILED or job is None or job.status not in ACTIVE:
        raise Conflict(
            # The run's own state: one that ended reads as processing until it is settled.
            f"The job is {_public_status(job.status, True) if job else status}; a server-run "
            "job can only be moved to failed (cancelled) while it is pending or processing"
        )
    error = text(patch.error_message) or "cancelled by the app"
    jobs.fail_job(session, backends, job.id, error)
    session.flush()
    settle(session, backends, row, FAILED, error)
    return row


def delete_enrichment_job(
    session: Session,
    backends: JobBackends,
    results: ObjectStorage,
    user_id: int,
    number: int,
) -> JobDeleted:
    """The job, its results and its stored files go. A job still running is cancelled first
    (failed, the activity logged, the unused credits released: what it delivered stays
    charged); the running worker loses its claim at its next write."""
    row = get_enrichment_job(session, user_id, number, lock=True)
    released = 0
    files: list[str] = []
    if row.job_id is not None:
        job = jobs.find_job(session, row.job_id)
        if job is not None:
            if job.status in ACTIVE:
                before = ledger.balance(session, user_id)
                jobs.fail_job(session, backends, job.id, CANCELLED)
                session.flush()
                released = ledger.balance(session, user_id) - before
                settle(session, backends, row, FAILED, CANCELLED)
            else:
                settle_if_done(session, backends, row)
            files = jobs.delete_job(session, job.id)
    session.delete(row)
    session.flush()
    for key in files:
        run_after_commit(session, partial(results.delete, key))
    return JobDeleted(
        job_id=number, deleted=True, files_deleted=len(files), credits_released=released
    )
