"""The one state machine of jobs and batches. Every status change goes through here, as a
conditional UPDATE, so two actors racing for the same row (a duplicate delivery, a sweeper and a
late worker, a cancel and a finishing item) cannot both win.

Jobs: ``pending -> queued -> processing -> completed | failed`` (exactly these strings; clients
stop polling only on ``completed`` or ``failed``). ``processing -> queued`` is the sweeper taking
back a job whose worker stopped renewing its lease.

Batches: ``pending -> processing -> completed``. A cancelled batch is ``completed`` with
``cancelled = true`` (clients know ``completed`` as final; see docs/decisions.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from pixelmill.db.base import utcnow
from pixelmill.db.models import Batch, Job
from pixelmill.observability.metrics import JOBS
from pixelmill.queue.base import run_after_commit

PENDING = "pending"
QUEUED = "queued"
PROCESSING = "processing"
COMPLETED = "completed"
FAILED = "failed"

JOB_STATES = (PENDING, QUEUED, PROCESSING, COMPLETED, FAILED)
TERMINAL = frozenset({COMPLETED, FAILED})
ACTIVE = (PENDING, QUEUED, PROCESSING)
CLAIMABLE = (PENDING, QUEUED)

JOB_TRANSITIONS: dict[str, frozenset[str]] = {
    PENDING: frozenset({QUEUED, PROCESSING, FAILED}),
    QUEUED: frozenset({PROCESSING, FAILED}),
    PROCESSING: frozenset({COMPLETED, FAILED, QUEUED}),
    COMPLETED: frozenset(),
    FAILED: frozenset(),
}

BATCH_STATES = (PENDING, PROCESSING, COMPLETED)
BATCH_TRANSITIONS: dict[str, frozenset[str]] = {
    PENDING: frozenset({PROCESSING, COMPLETED}),
    PROCESSING: frozenset({COMPLETED}),
    COMPLETED: frozenset(),
}


class IllegalTransition(ValueError):
    pass


def _check(table: dict[str, frozenset[str]], sources: Iterable[str], target: str) -> list[str]:
    sources = list(sources)
    for source in sources:
        if target not in table[source]:
            raise IllegalTransition(f"{source} -> {target} is not a transition")
    return sources


def move_job(
    session: Session,
    job_id: str,
    sources: Iterable[str],
    target: str,
    *,
    token: int | None = None,
    **values: Any,
) -> bool:
    """Move job ``job_id`` to ``target`` if it is in one of ``sources`` (and, with ``token``,
    still owned by that run). Returns whether this call made the move."""
    allowed = _check(JOB_TRANSITIONS, sources, target)
    stmt = update(Job).where(Job.id == job_id, Job.status.in_(allowed))
    if token is not None:
        stmt = stmt.where(Job.attempts == token)
    now = utcnow()
    if target in TERMINAL:
        values.setdefault("completed_at", now)
    result = session.execute(
        stmt.values(status=target, updated_at=now, **values).returning(Job.kind)
    ).first()
    if result is None:
        return False
    if target in TERMINAL:  # counted once the move is committed
        run_after_commit(session, JOBS.labels(str(result[0]), target).inc)
    return True


def move_batch(
    session: Session, batch_id: str, sources: Iterable[str], target: str, **values: Any
) -> bool:
    """Move batch ``batch_id`` to ``target`` if it is in one of ``sources``."""
    allowed = _check(BATCH_TRANSITIONS, sources, target)
    if target == COMPLETED:
        values.setdefault("completed_at", utcnow())
    result = session.execute(
        update(Batch)
        .where(Batch.id == batch_id, Batch.status.in_(allowed))
        .values(status=target, **values)
        .returning(Batch.id)
    ).first()
    return result is not None
