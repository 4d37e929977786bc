"""Jobs: create (reserve + row + dispatch after commit), claim (conditional update), record
each delivered result (capture one credit in the same transaction), finish (release the rest
once), and the account-scoped reads.

No transaction is ever held across the engine: a run is a series of short transactions, each
fenced by the run's token (``jobs.attempts`` at claim time), so a run that lost its lease (the
sweeper handed the job to another worker, or the batch was cancelled) can no longer write.
"""

from __future__ import annotations

import logging
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from pixelmill.credits import ledger
from pixelmill.db.base import utcnow
from pixelmill.db.models import Batch, Job, JobResult
from pixelmill.errors import NotFound
from pixelmill.jobs import lifecycle
from pixelmill.jobs.lifecycle import CLAIMABLE, COMPLETED, FAILED, PENDING, PROCESSING, QUEUED
from pixelmill.queue import TaskQueue, run_after_commit
from pixelmill.webhooks import delivery as webhooks

if TYPE_CHECKING:
    from pixelmill.db.session import Database
    from pixelmill.resources import Resources
    from pixelmill.storage import UrlSigner

log = logging.getLogger("pixelmill.jobs")

TASK = "jobs.run"
MAX_SCENES = 12


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


# ---- creating and dispatching -------------------------------------------------------------


def dispatch(db: Database, queue: TaskQueue, job_ids: Sequence[str]) -> None:
    """Mark ``pending`` jobs ``queued`` and send them to the queue. Call only outside any open
    transaction (after the creating one committed)."""
    if not job_ids:
        return
    with db.transaction() as session:
        for job_id in job_ids:
            lifecycle.move_job(session, job_id, [PENDING], QUEUED)
    for job_id in job_ids:
        queue.enqueue(TASK, job_id)


def dispatch_after_commit(
    session: Session, db: Database, queue: TaskQueue, job_ids: Sequence[str]
) -> None:
    ids = list(job_ids)
    run_after_commit(session, lambda: dispatch(db, queue, ids))


def create_scene_job(
    session: Session,
    resources: Resources,
    *,
    user_id: int,
    input_key: str,
    count: int,
    category: str,
    base_url: str,
    product_id: str | None = None,
    webhook_url: str | None = None,
) -> tuple[Job, int]:
    """Reserve ``count`` credits (1 per scene) and write a ``pending`` scene job; it is
    dispatched after the caller's transaction commits. Returns the job and the balance left."""
    job_id = new_id("job")
    reservation = ledger.reserve(session, user_id, count, f"job:{job_id}")
    job = Job(
        id=job_id,
        user_id=user_id,
        kind="scenes",
        status=PENDING,
        product_id=product_id,
        input_key=input_key,
        category=category,
        images_to_generate=count,
        seed=secrets.randbelow(2**31),
        credits_reserved=count,
        credits_used=0,
        reservation_id=reservation.id,
        webhook_url=webhook_url,
        base_url=base_url,
    )
    session.add(job)
    session.flush()
    dispatch_after_commit(session, resources.db, resources.queue, [job_id])
    return job, ledger.balance(session, user_id)


# ---- running ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """A job claimed by one run: ``token`` fences every write of that run."""

    job_id: str
    token: int
    user_id: int
    batch_id: str | None
    reservation_id: str
    input_key: str
    category: str
    count: int
    seed: int
    done: frozenset[int]


def claim(db: Database, job_id: str, lease_seconds: float) -> Claim | None:
    """``pending|queued -> processing`` with a conditional update: of two deliveries of the same
    task, one gets the claim and the other returns None."""
    now = utcnow()
    with db.transaction() as session:
        row = session.execute(
            update(Job)
            .where(Job.id == job_id, Job.status.in_(CLAIMABLE))
            .values(
                status=PROCESSING,
                attempts=Job.attempts + 1,
                started_at=func.coalesce(Job.started_at, now),
                updated_at=now,
                lease_expires_at=now + timedelta(seconds=lease_seconds),
            )
            .returning(Job.attempts)
        ).first()
        if row is None:
            return None
        job = session.get(Job, job_id)
        assert job is not None
        reservation_id = job.reservation_id
        if job.batch_id is not None:
            batch = session.get(Batch, job.batch_id)
            assert batch is not None
            reservation_id = batch.reservation_id
            lifecycle.move_batch(session, batch.id, [PENDING], PROCESSING, started_at=now)
        assert reservation_id is not None
        done = session.scalars(select(JobResult.position).where(JobResult.job_id == job_id))
        return Claim(
            job_id=job_id,
            token=int(row[0]),
            user_id=job.user_id,
            batch_id=job.batch_id,
            reservation_id=reservation_id,
            input_key=job.input_key,
            category=job.category,
            count=job.images_to_generate,
            seed=job.seed,
            done=frozenset(done),
        )


def record_result(
    db: Database, claim: Claim, position: int, scene: str, key: str, lease_seconds: float
) -> bool:
    """Store one delivered result, advance progress, renew the lease and capture its credit,
    all in one transaction. False when this run no longer owns the job (nothing written)."""
    now = utcnow()
    with db.transaction() as session:
        owned = session.execute(
            update(Job)
            .where(Job.id == claim.job_id, Job.status == PROCESSING, Job.attempts == claim.token)
            .values(
                progress_completed=Job.progress_completed + 1,
                credits_used=Job.credits_used + 1,
                updated_at=now,
                lease_expires_at=now + timedelta(seconds=lease_seconds),
            )
            .returning(Job.id)
        ).first()
        if owned is None:
            return False
        if not ledger.capture(session, claim.reservation_id, 1):
            # The reservation was settled under us (a cancel): deliver nothing more.
            session.rollback()
            return False
        session.add(JobResult(job_id=claim.job_id, position=position, scene=scene, key=key))
        if claim.batch_id is not None:
            session.execute(
                update(Batch)
                .where(Batch.id == claim.batch_id)
                .values(credits_used=Batch.credits_used + 1)
            )
    return True


def record_failure(db: Database, claim: Claim, lease_seconds: float) -> bool:
    """Count one item that could not be produced (no credit is captured for it)."""
    now = utcnow()
    with db.transaction() as session:
        owned = session.execute(
            update(Job)
            .where(Job.id == claim.job_id, Job.status == PROCESSING, Job.attempts == claim.token)
            .values(
                progress_failed=Job.progress_failed + 1,
                updated_at=now,
                lease_expires_at=now + timedelta(seconds=lease_seconds),
            )
            .returning(Job.id)
        ).first()
        return owned is not None


def finish(resources: Resources, claim: Claim, error: str | None = None) -> str | None:
    """End the run: ``completed`` when at least one result was delivered and no error stopped
    the job, else ``failed``; release the unused credits once; emit the events. Returns the
    final status, or None when this run no longer owned the job."""
    with resources.db.transaction() as session:
        job = session.get(Job, claim.job_id)
        if job is None:
            return None
        delivered = job.progress_completed
        status = COMPLETED if error is None and delivered > 0 else FAILED
        if status == FAILED and error is None:
            error = "no result could be produced"
        moved = lifecycle.move_job(
            session,
            claim.job_id,
            [PROCESSING],
            status,
            token=claim.token,
            error=error,
            lease_expires_at=None,
        )
        if not moved:
            return None
        _after_terminal(session, resources, claim.job_id)
        return status


def fail_job(session: Session, resources: Resources, job_id: str, error: str) -> bool:
    """Fail an active job whatever run holds it (sweeper, cancel); releases and emits."""
    moved = lifecycle.move_job(
        session, job_id, [PENDING, QUEUED, PROCESSING], FAILED, error=error, lease_expires_at=None
    )
    if moved:
        _after_terminal(session, resources, job_id)
    return moved


def discard_input_after_commit(session: Session, resources: Resources, job: Job) -> None:
    """A job's own uploaded input (not a library product) is deleted once the job is terminal
    (after the commit: a rolled-back move keeps it for the next run)."""
    if job.product_id is None:
        key = job.input_key
        run_after_commit(session, lambda: resources.library_storage.delete(key))


def _after_terminal(session: Session, resources: Resources, job_id: str) -> None:
    """What follows a job's terminal move, in the same transaction: release its own
    reservation and emit its event, or, for a batch item, complete the batch when it was the
    last one."""
    session.flush()
    job = session.get(Job, job_id)
    assert job is not None
    session.refresh(job)
    discard_input_after_commit(session, resources, job)
    if job.batch_id is not None:
        complete_batch_if_done(session, resources, job.batch_id)
        return
    if job.reservation_id is not None:
        ledger.release(session, job.reservation_id)
    payload: dict[str, Any] = {
        "event": f"job.{job.status}",
        "job_id": job.id,
        "status": job.status,
        "timestamp": iso(utcnow()),
        "credits_used": job.credits_used,
    }
    if job.status == COMPLETED:
        payload["results"] = results_of(session, job, resources.signer)
    else:
        payload["error"] = job.error or "failed"
    webhooks.emit(
        session, resources.queue, job.user_id, f"job.{job.status}", payload, job.webhook_url
    )


def complete_batch_if_done(session: Session, resources: Resources, batch_id: str) -> bool:
    """Complete the batch when none of its items is active: release its unused credits and
    emit ``batch.completed``. The batch row is locked first, so of two items finishing at
    once the later one sees the earlier one's result."""
    batch = session.scalar(select(Batch).where(Batch.id == batch_id).with_for_update())
    if batch is None or batch.status == COMPLETED:
        return False
    active = session.scalar(
        select(func.count())
        .select_from(Job)
        .where(Job.batch_id == batch_id, Job.status.in_(lifecycle.ACTIVE))
    )
    if active:
        return False
    finish_batch(session, resources, batch, cancelled=False)
    return True


def finish_batch(session: Session, resources: Resources, batch: Batch, *, cancelled: bool) -> None:
    ledger.release(session, batch.reservation_id)
    used = int(
        session.scalar(
            select(func.coalesce(func.sum(Job.credits_used), 0)).where(Job.batch_id == batch.id)
        )
        or 0
    )
    lifecycle.move_batch(
        session,
        batch.id,
        [PENDING, PROCESSING],
        COMPLETED,
        cancelled=cancelled,
        credits_used=used,
    )
    payload: dict[str, Any] = {
        "event": "batch.completed",
        "batch_id": batch.id,
        "status": COMPLETED,
        "cancelled": cancelled,
        "timestamp": iso(utcnow()),
        "credits_used": used,
    }
    webhooks.emit(
        session, resources.queue, batch.user_id, "batch.completed", payload, batch.webhook_url
    )


# ---- reading ------------------------------------------------------------------------------


def get_job(session: Session, user_id: int, job_id: str) -> Job:
    job = session.scalar(select(Job).where(Job.id == job_id, Job.user_id == user_id))
    if job is None:
        raise NotFound("Job not found")
    return job


def list_jobs(
    session: Session, user_id: int, limit: int, offset: int, status: str | None
) -> Sequence[Job]:
    stmt = select(Job).where(Job.user_id == user_id)
    if status:
        stmt = stmt.where(Job.status == status)
    return session.scalars(
        stmt.order_by(Job.created_at.desc(), Job.id).limit(limit).offset(offset)
    ).all()


def results_of(
    session: Session, job: Job, signer: UrlSigner, base_url: str | None = None
) -> list[dict[str, Any]]:
    """The job's results with fresh signed URLs."""
    base = (base_url or job.base_url).rstrip("/")
    rows = session.scalars(
        select(JobResult).where(JobResult.job_id == job.id).order_by(JobResult.position)
    ).all()
    return [
        {"scene": r.scene, "url": base + signer.path_for(r.key), "created_at": iso(r.created_at)}
        for r in rows
    ]


def job_view(session: Session, job: Job, signer: UrlSigner, base_url: str) -> dict[str, Any]:
    """The job status body of ``GET /api/v2/jobs/{job_id}``."""
    return {
        "job_id": job.id,
        "status": job.status,
        "type": job.kind,
        "images_to_generate": job.images_to_generate,
        "progress": {
            "completed": job.progress_completed,
            "failed": job.progress_failed,
            "total": job.images_to_generate,
        },
        "credits_reserved": job.credits_reserved,
        "credits_used": job.credits_used,
        "results": results_of(session, job, signer, base_url),
        "error": job.error,
        "product_uuid": job.product_id,
        "batch_id": job.batch_id,
        "created_at": iso(job.created_at),
        "started_at": iso(job.started_at),
        "completed_at": iso(job.completed_at),
    }
