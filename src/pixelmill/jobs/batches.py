"""Batches: one reservation for the whole batch, one job per image drawing on it. The batch
completes when its last item is terminal (``service.complete_batch_if_done``); a cancel fails
the items still active, releases what was not captured and completes the batch with
``cancelled = true``."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from pixelmill.credits import ledger
from pixelmill.db.models import Batch, Job, JobResult
from pixelmill.errors import Conflict, NotFound
from pixelmill.jobs import lifecycle, service
from pixelmill.jobs.lifecycle import COMPLETED, FAILED, PENDING, PROCESSING, QUEUED
from pixelmill.jobs.service import iso, new_id

if TYPE_CHECKING:
    from pixelmill.resources import Resources
    from pixelmill.storage import UrlSigner

CANCELLED_ERROR = "cancelled"


@dataclass(frozen=True)
class BatchItem:
    ref: str
    input_key: str
    category: str


def create_batch(
    session: Session,
    resources: Resources,
    *,
    user_id: int,
    items: Sequence[BatchItem],
    per_item: int,
    base_url: str,
    webhook_url: str | None,
) -> tuple[Batch, int]:
    """Reserve ``len(items) * per_item`` credits, write the batch and its item jobs
    (``pending``), dispatch them after commit. Returns the batch and the balance left."""
    batch_id = new_id("batch")
    total = len(items) * per_item
    reservation = ledger.reserve(session, user_id, total, f"batch:{batch_id}")
    batch = Batch(
        id=batch_id,
        user_id=user_id,
        status=PENDING,
        cancelled=False,
        images_per_product=per_item,
        total_images=len(items),
        credits_reserved=total,
        credits_used=0,
        reservation_id=reservation.id,
        webhook_url=webhook_url,
        base_url=base_url,
    )
    session.add(batch)
    session.flush()
    job_ids = []
    for item in items:
        job = Job(
            id=new_id("job"),
            user_id=user_id,
            kind="scenes",
            status=PENDING,
            batch_id=batch_id,
            item_ref=item.ref,
            input_key=item.input_key,
            category=item.category,
            images_to_generate=per_item,
            seed=secrets.randbelow(2**31),
            credits_reserved=per_item,
            credits_used=0,
            reservation_id=None,
            webhook_url=None,
            base_url=base_url,
        )
        session.add(job)
        job_ids.append(job.id)
    session.flush()
    service.dispatch_after_commit(session, resources.db, resources.queue, job_ids)
    return batch, ledger.balance(session, user_id)


def get_batch(session: Session, user_id: int, batch_id: str, lock: bool = False) -> Batch:
    stmt = select(Batch).where(Batch.id == batch_id, Batch.user_id == user_id)
    if lock:
        stmt = stmt.with_for_update()
    batch = session.scalar(stmt)
    if batch is None:
        raise NotFound("Batch not found")
    return batch


def list_batches(
    session: Session, user_id: int, limit: int, offset: int, status: str | None
) -> Sequence[Batch]:
    stmt = select(Batch).where(Batch.user_id == user_id)
    if status:
        stmt = stmt.where(Batch.status == status)
    return session.scalars(
        stmt.order_by(Batch.created_at.desc(), Batch.id).limit(limit).offset(offset)
    ).all()


def cancel_batch(session: Session, resources: Resources, user_id: int, batch_id: str) -> Batch:
    """Cancel a ``pending`` or ``processing`` batch: its active items fail with error
    ``cancelled`` (a running item stops at its next scene; what it delivered stays delivered
    and charged), the unused credits come back, the batch is ``completed`` and ``cancelled``."""
    batch = get_batch(session, user_id, batch_id, lock=True)
    if batch.status not in (PENDING, PROCESSING):
        raise Conflict(
            f"Batch is {batch.status}; only a pending or processing batch can be cancelled"
        )
    active = session.scalars(
        select(Job.id).where(
            Job.batch_id == batch_id, Job.status.in_([PENDING, QUEUED, PROCESSING])
        )
    ).all()
    for job_id in active:
        if lifecycle.move_job(
            session,
            job_id,
            [PENDING, QUEUED, PROCESSING],
            FAILED,
            error=CANCELLED_ERROR,
            lease_expires_at=None,
        ):
            job = session.get(Job, job_id)
            assert job is not None
            service.discard_input_after_commit(session, resources, job)
    session.flush()
    service.finish_batch(session, resources, batch, cancelled=True)
    session.flush()
    session.refresh(batch)
    return batch


def batch_counts(session: Session, batch_id: str) -> dict[str, int]:
    rows = session.execute(
        select(Job.status, func.count()).where(Job.batch_id == batch_id).group_by(Job.status)
    ).all()
    by_status = {str(s): int(n) for s, n in rows}
    done = by_status.get(COMPLETED, 0)
    failed = by_status.get(FAILED, 0)
    total = sum(by_status.values())
    return {"completed": done, "failed": failed, "pending": total - done - failed, "total": total}


def batch_view(
    session: Session, batch: Batch, signer: UrlSigner, base_url: str, include_images: bool
) -> dict[str, Any]:
    """The batch status body of ``GET /api/v2/batches/{batch_id}``."""
    body: dict[str, Any] = {
        "batch_id": batch.id,
        "status": batch.status,
        "cancelled": batch.cancelled,
        "progress": batch_counts(session, batch.id),
        "total_images": batch.total_images,
        "images_per_product": batch.images_per_product,
        "credits_reserved": batch.credits_reserved,
        "credits_used": batch.credits_used,
        "created_at": iso(batch.created_at),
        "started_at": iso(batch.started_at),
        "completed_at": iso(batch.completed_at),
        "images": [],
    }
    if batch.status != COMPLETED:
        # Live count while items are still delivering.
        body["credits_used"] = int(
            session.scalar(
                select(func.coalesce(func.sum(Job.credits_used), 0)).where(Job.batch_id == batch.id)
            )
            or 0
        )
    if include_images:
        jobs = session.scalars(
            select(Job).where(Job.batch_id == batch.id).order_by(Job.created_at, Job.id)
        ).all()
        base = base_url.rstrip("/")
        results: dict[str, list[dict[str, Any]]] = {j.id: [] for j in jobs}
        for r in session.scalars(
            select(JobResult)
            .join(Job, Job.id == JobResult.job_id)
            .where(Job.batch_id == batch.id)
            .order_by(JobResult.position)
        ):
            results[r.job_id].append({"scene": r.scene, "url": base + signer.path_for(r.key)})
        body["images"] = [
            {
                "id": j.item_ref,
                "job_id": j.id,
                "status": j.status,
                "error": j.error,
                "results": results[j.id],
            }
            for j in jobs
        ]
    return body


def batch_list_item(session: Session, batch: Batch) -> dict[str, Any]:
    return {
        "batch_id": batch.id,
        "status": batch.status,
        "cancelled": batch.cancelled,
        "total_images": batch.total_images,
        "progress": batch_counts(session, batch.id),
        "credits_reserved": batch.credits_reserved,
        "credits_used": batch.credits_used,
        "created_at": iso(batch.created_at),
        "completed_at": iso(batch.completed_at),
    }
