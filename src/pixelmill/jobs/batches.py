"""Batches: one reservation for the whole batch, one job per image drawing on it. The batch
completes when its last item is terminal (``service.complete_batch_if_done``); a cancel fails
the items still active, releases what was not captured and completes the batch with
``cancelled = true``."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from pixelmill.credits import ledger
from pixelmill.db.models import Batch, Job, JobResult
from pixelmill.errors import Conflict, NotFound
from pixelmill.jobs import lifecycle, service
from pixelmill.jobs.failures import job_failures
from pixelmill.jobs.lifecycle import ACTIVE, COMPLETED, FAILED, PENDING, PROCESSING
from pixelmill.jobs.schemas import (
    BatchImageResult,
    BatchImageStatus,
    BatchListItem,
    BatchProgress,
    BatchStatus,
)
from pixelmill.jobs.service import JobBackends, new_id
from pixelmill.storage import UrlSigner

CANCELLED_ERROR = service.CANCELLED_ERROR


@dataclass(frozen=True)
class BatchItem:
    ref: str
    input_key: str
    category: str


def _owned_batches(user_id: int) -> Select[Batch]:
    """Every read of batches starts here: another account's batch is never found."""
    return select(Batch).where(Batch.user_id == user_id)


def create_batch(
    session: Session,
    backends: JobBackends,
    *,
    user_id: int,
    items: Sequence[BatchItem],
    kind: str,
    per_item: int,
    per_item_price: int,
    base_url: str,
    webhook_url: str | None,
    test: bool,
) -> tuple[Batch, int]:
    """Reserve ``len(items) * per_item_price`` (``per_item`` outputs each), write the batch
    and its item jobs of ``kind`` (``pending``), dispatch them after commit. A test batch
    (``test``: a test key's) reserves nothing and its items capture nothing. Returns the batch
    and the balance left."""
    batch_id = new_id("batch")
    if test:
        per_item_price = 0
    total = len(items) * per_item_price
    reservation = None if test else ledger.reserve(session, user_id, total, f"batch:{batch_id}")
    batch = Batch(
        id=batch_id,
        user_id=user_id,
        status=PENDING,
        cancelled=False,
        images_per_product=per_item,
        total_images=len(items),
        credits_reserved=total,
        credits_used=0,
        reservation_id=None if reservation is None else reservation.id,
        test=test,
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
            kind=kind,
            status=PENDING,
            batch_id=batch_id,
            item_ref=item.ref,
            input_key=item.input_key,
            category=item.category,
            images_to_generate=per_item,
            seed=secrets.randbelow(2**31),
            credits_reserved=per_item_price,
            credits_used=0,
            reservation_id=None,
            test=test,
            webhook_url=None,
            base_url=base_url,
        )
        session.add(job)
        job_ids.append(job.id)
    session.flush()
    service.dispatch_after_commit(session, backends, job_ids)
    return batch, ledger.balance(session, user_id)


def get_batch(session: Session, user_id: int, batch_id: str, lock: bool = False) -> Batch:
    stmt = _owned_batches(user_id).where(Batch.id == batch_id)
    if lock:
        stmt = stmt.with_for_update()
    batch = session.scalar(stmt)
    if batch is None:
        raise NotFound("Batch not found")
    return batch


def list_batches(
    session: Session, user_id: int, limit: int, offset: int, status: str | None
) -> Sequence[Batch]:
    return service.page(session, _owned_batches(user_id), Batch, limit, offset, status)


def cancel_batch(session: Session, backends: JobBackends, user_id: int, batch_id: str) -> Batch:
    """Cancel a ``pending`` or ``processing`` batch: its active items fail with error
    ``cancelled`` (a running item stops at its next scene; what it delivered stays delivered
    and charged), the unused credits come back, the batch is ``completed`` and ``cancelled``."""
    batch = get_batch(session, user_id, batch_id, lock=True)
    if batch.status not in (PENDING, PROCESSING):
        raise Conflict(
            f"Batch is {batch.status}; only a pending or processing batch can be cancelled"
        )
    active = session.scalars(
        select(Job.id).where(Job.batch_id == batch_id, Job.status.in_(ACTIVE))
    ).all()
    for job_id in active:
        if lifecycle.move_job(
            session, job_id, ACTIVE, FAILED, error=CANCELLED_ERROR, lease_expires_at=None
        ):
            job = session.get(Job, job_id)
            assert job is not None
            service.discard_input_after_commit(session, backends.inputs, job)
    session.flush()
    service.finish_batch(session, backends, batch, cancelled=True)
    session.flush()
    session.refresh(batch)
    return batch


def batch_progress(session: Session, batch_id: str) -> BatchProgress:
    rows = session.execute(
        select(Job.status, func.count()).where(Job.batch_id == batch_id).group_by(Job.status)
    ).all()
    by_status = {str(s): int(n) for s, n in rows}
    done = by_status.get(COMPLETED, 0)
    failed = by_status.get(FAILED, 0)
    total = sum(by_status.values())
    return BatchProgress(completed=done, failed=failed, pending=total - done - failed, total=total)


def _images(
    session: Session, signer: UrlSigner, batch: Batch, base_url: str
) -> list[BatchImageStatus]:
    jobs = session.scalars(
        select(Job).where(Job.batch_id == batch.id).order_by(Job.created_at, Job.id)
    ).all()
    base = base_url.rstrip("/")
    results: dict[str, list[BatchImageResult]] = {j.id: [] for j in jobs}
    for r in session.scalars(
        select(JobResult)
        .join(Job, Job.id == JobResult.job_id)
        .where(Job.batch_id == batch.id)
        .order_by(JobResult.position)
    ):
        results[r.job_id].append(BatchImageResult(scene=r.scene, url=base + signer.path_for(r.key)))
    return [
        BatchImageStatus(
            id=j.item_ref,
            job_id=j.id,
            status=j.status,
            error=j.error,
            results=results[j.id],
            failures=job_failures(j),
        )
        for j in jobs
    ]


def batch_status(
    session: Session, signer: UrlSigner, batch: Batch, base_url: str, include_images: bool
) -> BatchStatus:
    """The body of ``GET /api/v2/batches/{batch_id}``."""
    live: dict[str, int] = {}
    if batch.status != COMPLETED:
        # Live count while items are still delivering.
        live["credits_used"] = service.credits_used_by_batch(session, batch.id)
    return BatchStatus.from_row(
        batch,
        progress=batch_progress(session, batch.id),
        images=_images(session, signer, batch, base_url) if include_images else [],
        **live,
    )


def batch_list_item(session: Session, batch: Batch) -> BatchListItem:
    return BatchListItem.from_row(batch, progress=batch_progress(session, batch.id))
