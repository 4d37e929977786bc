"""The sweeper: puts stranded work back on the queue (a restarted server, a killed worker, a
message lost between commit and queue). Idempotent and safe to run from several processes:
every step is a conditional update or a dispatch that the conditional claim deduplicates."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import and_, or_, select, update
from sqlalchemy.orm import Session

from pixelmill.db.base import utcnow
from pixelmill.db.models import Job
from pixelmill.jobs import lifecycle, service
from pixelmill.jobs.lifecycle import PENDING, PROCESSING, QUEUED
from pixelmill.jobs.service import JobBackends
from pixelmill.queue import dispatch_after_commit

UNSENT_GRACE_SECONDS = 5.0
"""A ``pending`` job is sent to the queue right after its creating transaction commits (a few
milliseconds; a second or two while the broker reconnects): one still ``pending`` this long
after it was saved was never sent, its server having died in between (or the broker being
down), and the sweep sends it."""


def sweep_jobs(
    session: Session,
    backends: JobBackends,
    *,
    dispatch_timeout_seconds: float,
    max_attempts: int,
) -> dict[str, int]:
    """Re-dispatch (after the caller's commit) or fail stranded jobs: running ones whose lease
    ran out (their run stopped renewing it), saved ones never sent to the queue (``pending``
    for :data:`UNSENT_GRACE_SECONDS`, or ``dispatch_timeout_seconds`` if shorter), and sent
    ones (``queued``) no worker claimed within ``dispatch_timeout_seconds`` of their last
    dispatch. A ``pending`` row is the outbox of its own dispatch: it is written in the
    creating transaction, so a job can never be saved and forgotten. Returns counts of what it
    did."""
    now = utcnow()
    requeued: list[str] = []
    failed = 0
    expired = session.execute(
        select(Job.id, Job.attempts).where(Job.status == PROCESSING, Job.lease_expires_at < now)
    ).all()
    for job_id, attempts in expired:
        if attempts >= max_attempts:
            error = f"the job's worker stopped {attempts} times; giving up"
            if service.fail_job(session, backends, job_id, error):
                failed += 1
        elif lifecycle.move_job(
            session, job_id, [PROCESSING], QUEUED, token=attempts, lease_expires_at=None
        ):
            requeued.append(job_id)
    # Waiting jobs never sent, or whose message may be lost: dispatch again (the claim
    # deduplicates).
    unsent = now - timedelta(seconds=min(UNSENT_GRACE_SECONDS, dispatch_timeout_seconds))
    lost = now - timedelta(seconds=dispatch_timeout_seconds)
    waiting = session.execute(
        select(Job.id, Job.status).where(
            or_(
                and_(Job.status == PENDING, Job.updated_at < unsent),
                and_(Job.status == QUEUED, Job.updated_at < lost),
            )
        )
    ).all()
    if waiting:
        ids = [job_id for job_id, _ in waiting]
        session.execute(update(Job).where(Job.id.in_(ids)).values(updated_at=now))
    never_sent = [job_id for job_id, status in waiting if status == PENDING]
    if never_sent:  # sent, then marked queued, as on create
        service.dispatch_after_commit(session, backends, never_sent)
    for job_id in [*requeued, *(job_id for job_id, status in waiting if status == QUEUED)]:
        dispatch_after_commit(session, backends.queue, service.TASK, job_id)
    return {"requeued": len(requeued), "redispatched": len(waiting), "failed": failed}
