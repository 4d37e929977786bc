"""The sweeper: puts stranded work back on the queue (a restarted server, a killed worker, a
message lost between commit and queue). Idempotent and safe to run from several processes:
every step is a conditional update or a dispatch that the conditional claim deduplicates."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from sqlalchemy import delete, select, update

from pixelmill.db.base import utcnow
from pixelmill.db.models import IdempotencyKey, Job
from pixelmill.jobs import lifecycle, service
from pixelmill.jobs.lifecycle import PENDING, PROCESSING, QUEUED
from pixelmill.webhooks.delivery import sweep_deliveries

if TYPE_CHECKING:
    from pixelmill.resources import Resources

IDEMPOTENCY_TTL = timedelta(hours=24)


def sweep_jobs(resources: Resources) -> dict[str, int]:
    """Re-dispatch or fail stranded jobs. Returns counts of what it did."""
    settings = resources.settings
    now = utcnow()
    requeued: list[str] = []
    failed = 0
    with resources.db.transaction() as session:
        expired = session.execute(
            select(Job.id, Job.attempts).where(Job.status == PROCESSING, Job.lease_expires_at < now)
        ).all()
        for job_id, attempts in expired:
            if attempts >= settings.job_max_attempts:
                if service.fail_job(
                    session,
                    resources,
                    job_id,
                    f"the job's worker stopped {attempts} times; giving up",
                ):
                    failed += 1
            elif lifecycle.move_job(
                session, job_id, [PROCESSING], QUEUED, token=attempts, lease_expires_at=None
            ):
                requeued.append(job_id)
        # Waiting jobs whose message may be lost: dispatch again (the claim deduplicates).
        stale = now - timedelta(seconds=settings.job_lease_seconds)
        waiting = session.scalars(
            select(Job.id).where(Job.status.in_([PENDING, QUEUED]), Job.updated_at < stale)
        ).all()
        if waiting:
            session.execute(update(Job).where(Job.id.in_(waiting)).values(updated_at=now))
    for job_id in [*requeued, *waiting]:
        resources.queue.enqueue(service.TASK, job_id)
    return {"requeued": len(requeued), "redispatched": len(waiting), "failed": failed}


def sweep(resources: Resources) -> dict[str, int]:
    """The maintenance task: stranded jobs, overdue webhook deliveries, expired idempotency
    records."""
    counts = sweep_jobs(resources)
    counts["webhooks_dispatched"] = sweep_deliveries(resources)
    with resources.db.transaction() as session:
        gone = session.execute(
            delete(IdempotencyKey)
            .where(IdempotencyKey.created_at < utcnow() - IDEMPOTENCY_TTL)
            .returning(IdempotencyKey.id)
        ).all()
    counts["idempotency_expired"] = len(gone)
    return counts
