"""Jobs: create (reserve + row + dispatch after commit), claim (conditional update), record
each delivered result (capture its price in the same transaction), finish (release the rest
once), and the account-scoped reads.

A test job (made with a test key, ``jobs.test``) takes the same path with no reservation: it
reserves, captures and releases nothing, writes no ledger entry, and its images are
watermarked by the runner.

Every function takes the caller's session and never commits. No transaction is ever held
across the engine: a run (``runner.py``) is a series of short transactions, each fenced by the
run's token (``jobs.attempts`` at claim time), so a run that lost its lease (the sweeper handed
the job to another worker, or the batch was cancelled) can no longer write.
"""

from __future__ import annotations

import logging
import secrets
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict
from sqlalchemy import ColumnElement, ScalarSelect, Select, delete, func, select, update
from sqlalchemy.orm import QueryableAttribute, Session

from pixelmill.credits import ledger
from pixelmill.db.base import utcnow
from pixelmill.db.models import Batch, Job, JobResult, draw_number
from pixelmill.db.session import Database
from pixelmill.errors import Conflict, NotFound
from pixelmill.jobs import failures, lifecycle
from pixelmill.jobs.lifecycle import CLAIMABLE, COMPLETED, FAILED, PENDING, PROCESSING, QUEUED
from pixelmill.jobs.schemas import JobResultOut, JobStatus, job_warnings
from pixelmill.queue import TaskQueue, run_after_commit
from pixelmill.schemas import iso
from pixelmill.storage import ObjectStorage, UrlSigner
from pixelmill.webhooks import delivery as webhooks

log = logging.getLogger("pixelmill.jobs")

TASK = "jobs.run"


TerminalHook = Callable[[Session, "JobBackends", Job], object]
"""A kind's step in the transaction that ends one of its jobs (after the release and the
``job.*`` event), e.g. the storefront settling an enrichment job."""


@dataclass(frozen=True)
class JobBackends:
    """What job code uses besides the caller's session: the database (a dispatch after commit
    runs its own short transaction), the queue (runs and webhook events), the signer of result
    links, the store of uploaded inputs (deleted once their job is terminal) and, per job
    kind, its :data:`TerminalHook`."""

    db: Database
    queue: TaskQueue
    signer: UrlSigner
    inputs: ObjectStorage
    on_terminal: Mapping[str, TerminalHook] = field(default_factory=dict)


class JobParams(BaseModel):
    """A job's parameters (``jobs.params``), written on create and read back by its kind's
    runner. Each kind declares its own subclass (validated when the job is created, read back
    typed with :meth:`Claim.typed`); this base, which keeps unknown keys, reads the dict of a
    kind that declares none. ``own_inputs``: uploaded files the job deletes once terminal."""

    model_config = ConfigDict(extra="allow")

    own_inputs: list[str] = []


P = TypeVar("P", bound=BaseModel)


class LostClaim(Exception):
    """This run no longer owns the job: the caller's transaction must roll back."""


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def _owned_jobs(user_id: int) -> Select[Job]:
    """Every read of jobs starts here: another account's job is never found."""
    return select(Job).where(Job.user_id == user_id)


# ---- creating and dispatching -------------------------------------------------------------


def dispatch(backends: JobBackends, job_ids: Sequence[str]) -> None:
    """Send ``pending`` jobs to the queue, then mark the ones sent ``queued``. Call only
    outside any open transaction (after the creating one committed).

    Sent first, marked after: ``pending`` then means "maybe never sent", which the sweeper
    re-sends within seconds (a server that died between its commit and the send), while a
    ``queued`` job's message is in the queue and is sent again only after the longer dispatch
    timeout (a message lost with the broker). A job claimed before its mark stays claimed (the
    mark only moves ``pending`` rows)."""
    sent: list[str] = []
    try:
        for job_id in job_ids:
            backends.queue.enqueue(TASK, job_id)
            sent.append(job_id)
    finally:
        if sent:
            with backends.db.transaction() as session:
                for job_id in sent:
                    lifecycle.move_job(session, job_id, [PENDING], QUEUED)


def dispatch_after_commit(session: Session, backends: JobBackends, job_ids: Sequence[str]) -> None:
    ids = list(job_ids)
    run_after_commit(session, lambda: dispatch(backends, ids))


def create_job(
    session: Session,
    backends: JobBackends,
    *,
    user_id: int,
    kind: str,
    count: int,
    price: int,
    base_url: str,
    input_key: str = "",
    category: str = "other",
    params: JobParams | dict[str, Any] | None = None,
    product_id: str | None = None,
    webhook_url: str | None = None,
    numbered: bool = False,
    test: bool,
) -> tuple[Job, int]:
    """Reserve ``price`` for ``count`` outputs of a job of ``kind`` and write it ``pending``;
    it is dispatched after the caller's transaction commits. ``numbered`` draws the integer id
    that some surfaces show (``jobs.number``); ``test`` (a test key's job) reserves nothing.
    Returns the job and the balance left."""
    if isinstance(params, BaseModel):
        params = params.model_dump(mode="json")
    job_id = new_id("job")
    reservation = None if test else ledger.reserve(session, user_id, price, f"job:{job_id}")
    job = Job(
        id=job_id,
        user_id=user_id,
        kind=kind,
        status=PENDING,
        product_id=product_id,
        input_key=input_key,
        category=category,
        images_to_generate=count,
        params=params,
        seed=secrets.randbelow(2**31),
        credits_reserved=0 if reservation is None else price,
        credits_used=0,
        reservation_id=None if reservation is None else reservation.id,
        test=test,
        webhook_url=webhook_url,
        base_url=base_url,
        number=draw_number(session, "job") if numbered else None,
    )
    session.add(job)
    session.flush()
    dispatch_after_commit(session, backends, [job_id])
    return job, ledger.balance(session, user_id)


# ---- running ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """A job claimed by one run: ``token`` fences every write of that run. A test job
    (``test``) has no reservation and captures nothing."""

    job_id: str
    token: int
    user_id: int
    batch_id: str | None
    reservation_id: str | None
    kind: str
    input_key: str
    category: str
    count: int
    seed: int
    params: dict[str, Any]
    unit_price: int
    done: frozenset[int]
    test: bool = False

    def typed(self, model: type[P]) -> P:
        """The job's parameters as its kind's :class:`JobParams` subclass."""
        return model.model_validate(self.params)


def lock_batch_of(session: Session, job_id: str) -> None:
    """Lock a batch item's batch row before the item's own row. Every transaction that moves
    a batch item and then its batch (claim, finish, fail) takes the two rows in the order the
    batch's cancel does, batch first, so none waits on another holding the other row
    (PostgreSQL found the deadlock: a claim that locked its job, then the batch, against a
    cancel that locked the batch, then the job). Nothing for a job outside a batch."""
    batch_id = session.scalar(select(Job.batch_id).where(Job.id == job_id))
    if batch_id is not None:
        session.execute(select(Batch.id).where(Batch.id == batch_id).with_for_update())


def claim(session: Session, job_id: str, lease_seconds: float) -> Claim | None:
    """``pending|queued -> processing`` with a conditional update: of two deliveries of the same
    task, one gets the claim and the other returns None."""
    lock_batch_of(session, job_id)
    now = utcnow()
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
    assert reservation_id is not None or job.test
    done = session.scalars(select(JobResult.position).where(JobResult.job_id == job_id))
    return Claim(
        job_id=job_id,
        token=int(row[0]),
        user_id=job.user_id,
        batch_id=job.batch_id,
        reservation_id=reservation_id,
        kind=job.kind,
        input_key=job.input_key,
        category=job.category,
        count=job.images_to_generate,
        seed=job.seed,
        params=dict(job.params or {}),
        # Every image of a job costs the same: its share of what the job reserved.
        unit_price=job.credits_reserved // max(job.images_to_generate, 1),
        done=frozenset(done),
        test=job.test,
    )


def _renew(session: Session, claim: Claim, lease_seconds: float, **counters: Any) -> None:
    """Advance the run's counters and renew its lease; :class:`LostClaim` when the run no
    longer owns the job."""
    now = utcnow()
    owned = session.execute(
        update(Job)
        .where(Job.id == claim.job_id, Job.status == PROCESSING, Job.attempts == claim.token)
        .values(updated_at=now, lease_expires_at=now + timedelta(seconds=lease_seconds), **counters)
        .returning(Job.id)
    ).first()
    if owned is None:
        raise LostClaim(claim.job_id)


def owns(session: Session, claim: Claim, lock: bool = False) -> bool:
    """Whether the run of ``claim`` still owns its job (a read: a cancel or the sweeper may
    have moved it; ``lock`` keeps the row until the caller's transaction ends)."""
    stmt = select(Job.id).where(
        Job.id == claim.job_id, Job.status == PROCESSING, Job.attempts == claim.token
    )
    return session.scalar(stmt.with_for_update() if lock else stmt) is not None


def heartbeat(session: Session, claim: Claim, lease_seconds: float) -> None:
    """Renew the run's lease while it is alive (rendering one output may take longer than the
    lease); :class:`LostClaim` when the run no longer owns the job."""
    _renew(session, claim, lease_seconds)


def record_result(
    session: Session,
    claim: Claim,
    position: int,
    scene: str,
    key: str,
    lease_seconds: float,
    *,
    price: int | None = None,
) -> None:
    """Store one delivered result, advance progress, renew the lease and capture its price
    (``price``, or the job's even share per result when None). Raises :class:`LostClaim` (the
    caller rolls back) when this run no longer owns the job or its reservation was settled
    under it (a cancel). A test job captures nothing."""
    price = 0 if claim.test else claim.unit_price if price is None else price
    _renew(
        session,
        claim,
        lease_seconds,
        progress_completed=Job.progress_completed + 1,
        credits_used=Job.credits_used + price,
    )
    if claim.reservation_id is not None and not ledger.capture(
        session, claim.reservation_id, price, claim.kind
    ):
        raise LostClaim(claim.job_id)
    session.add(JobResult(job_id=claim.job_id, position=position, scene=scene, key=key))
    job = session.get(Job, claim.job_id)
    if job is not None:  # delivered on a later run after all: no longer a failure
        cleared = failures.without_failure(job.params, position)
        if cleared is not None:
            job.params = cleared
    if claim.batch_id is not None:
        session.execute(
            update(Batch)
            .where(Batch.id == claim.batch_id)
            .values(credits_used=Batch.credits_used + price)
        )


def record_failure(
    session: Session,
    claim: Claim,
    lease_seconds: float,
    position: int | None = None,
    reason: str | None = None,
) -> None:
    """Count one item that could not be produced (nothing is captured for it) and keep why:
    ``{"index": position, "reason": reason}`` in the job's failures (``jobs/failures.py``),
    which its polls and webhook show."""
    _renew(session, claim, lease_seconds, progress_failed=Job.progress_failed + 1)
    if position is not None:
        job = session.get(Job, claim.job_id)
        if job is not None:
            job.params = failures.with_failure(job.params, position, reason or "unknown error")


def finish(
    session: Session,
    backends: JobBackends,
    claim: Claim,
    error: str | None = None,
    *,
    reason: str | None = None,
) -> str | None:
    """End the run: ``completed`` when at least one result was delivered and no error stopped
    the job, else ``failed`` (``reason``: the last item's failure, said in the error when
    nothing was delivered); release the unused credits once; emit the events. Returns the
    final status, or None when this run no longer owned the job."""
    lock_batch_of(session, claim.job_id)
    job = session.get(Job, claim.job_id)
    if job is None:
        return None
    status = COMPLETED if error is None and job.progress_completed > 0 else FAILED
    if status == FAILED and error is None:
        error = "no result could be produced" + (f" ({reason[:300]})" if reason else "")
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
    _after_terminal(session, backends, claim.job_id)
    return status


def fail_job(session: Session, backends: JobBackends, job_id: str, error: str) -> bool:
    """Fail an active job whatever run holds it (sweeper, cancel); releases and emits."""
    lock_batch_of(session, job_id)
    moved = lifecycle.move_job(
        session, job_id, [PENDING, QUEUED, PROCESSING], FAILED, error=error, lease_expires_at=None
    )
    if moved:
        _after_terminal(session, backends, job_id)
    return moved


CANCELLED_ERROR = "cancelled"
"""The error of a job (or batch item) its owner cancelled."""


def cancel_job(session: Session, backends: JobBackends, user_id: int, job_ref: str) -> Job:
    """Cancel the account's pending, queued or processing job (its id, or the integer id the
    video and ad-pack surfaces show). It ends ``failed`` with error ``cancelled`` (the clients
    know only ``completed`` and ``failed`` as terminal); a running run stops before its next
    output and its routed provider calls are cancelled; what it delivered stays delivered and
    charged, the rest of its reservation comes back. 409 once the job is terminal."""
    if job_ref.isdigit() and len(job_ref) < 19:
        job = get_numbered_job(session, user_id, int(job_ref))
    else:
        job = get_job(session, user_id, job_ref)
    if not fail_job(session, backends, job.id, CANCELLED_ERROR):
        raise Conflict(
            f"Job is {job.status}; only a pending, queued or processing job can be cancelled"
        )
    session.refresh(job)
    return job


def discard_input_after_commit(session: Session, inputs: ObjectStorage, job: Job) -> None:
    """A job's own uploaded inputs (not a library product: its ``input_key``, and any
    ``params["own_inputs"]``, e.g. a model photo) are deleted once the job is terminal (after
    the commit: a rolled-back move keeps them for the next run)."""
    keys = list(JobParams.model_validate(job.params or {}).own_inputs)
    if job.product_id is None and job.input_key:
        keys.append(job.input_key)
    for key in keys:
        run_after_commit(session, partial(inputs.delete, key))


def _after_terminal(session: Session, backends: JobBackends, job_id: str) -> None:
    """What follows a job's terminal move, in the same transaction: release its own
    reservation, emit its event and run its kind's terminal hook, or, for a batch item,
    complete the batch when it was the last one."""
    session.flush()
    job = session.get(Job, job_id)
    assert job is not None
    session.refresh(job)
    discard_input_after_commit(session, backends.inputs, job)
    if job.batch_id is not None:
        complete_batch_if_done(session, backends, job.batch_id)
        return
    if job.reservation_id is not None:
        ledger.release(session, job.reservation_id)
    payload: dict[str, Any] = {
        "event": f"job.{job.status}",
        "job_id": job.id,
        "status": job.status,
        "timestamp": iso(utcnow()),
        "credits_used": job.credits_used,
        "test": job.test,
        "failures": [f.model_dump() for f in failures.job_failures(job)],
    }
    warnings = job_warnings(job)
    if warnings:
        payload["warnings"] = warnings
    if job.status == COMPLETED:
        results = results_of(session, backends.signer, job)
        payload["results"] = [r.model_dump(mode="json") for r in results]
    else:
        payload["error"] = job.error or "failed"
    webhooks.emit(
        session, backends.queue, job.user_id, f"job.{job.status}", payload, job.webhook_url
    )
    hook = backends.on_terminal.get(job.kind)
    if hook is not None:
        hook(session, backends, job)


def complete_batch_if_done(session: Session, backends: JobBackends, batch_id: str) -> bool:
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
    finish_batch(session, backends, batch, cancelled=False)
    return True


def credits_used_by_batch(session: Session, batch_id: str) -> int:
    return int(
        session.scalar(
            select(func.coalesce(func.sum(Job.credits_used), 0)).where(Job.batch_id == batch_id)
        )
        or 0
    )


def finish_batch(session: Session, backends: JobBackends, batch: Batch, *, cancelled: bool) -> None:
    if batch.reservation_id is not None:
        ledger.release(session, batch.reservation_id)
    used = credits_used_by_batch(session, batch.id)
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
        "test": batch.test,
    }
    webhooks.emit(
        session, backends.queue, batch.user_id, "batch.completed", payload, batch.webhook_url
    )


# ---- reading ------------------------------------------------------------------------------


def get_job(session: Session, user_id: int, job_id: str, kind: str | None = None) -> Job:
    return _owned_job(session, user_id, Job.id == job_id, kind)


def _owned_job(session: Session, user_id: int, which: ColumnElement[bool], kind: str | None) -> Job:
    """The user's job that ``which`` selects, of ``kind`` if given (``NotFound`` otherwise)."""
    stmt = _owned_jobs(user_id).where(which)
    if kind is not None:
        stmt = stmt.where(Job.kind == kind)
    job = session.scalar(stmt)
    if job is None:
        raise NotFound("Job not found")
    return job


def job_kinds(session: Session, job_ids: Collection[str]) -> dict[str, str]:
    """The kind of each of ``job_ids`` that still exists (for reports by operation)."""
    if not job_ids:
        return {}
    rows = session.execute(select(Job.id, Job.kind).where(Job.id.in_(list(job_ids))))
    return {str(job_id): str(kind) for job_id, kind in rows}


@dataclass(frozen=True)
class WorkSummary:
    """A job or a batch as the account's history shows it beside its credits."""

    id: str
    kind: str
    """The job's kind (``scenes``, ``video``, ``avatar``...), or ``batch``."""
    status: str
    outputs: int
    """Images (or files) it was asked for."""
    error: str | None
    seconds: float | None
    """From its start to its end, once it has ended."""


def _seconds(started: Any, ended: Any) -> float | None:
    return round((ended - started).total_seconds(), 3) if started and ended else None


def work_summaries(
    session: Session, job_ids: Collection[str], batch_ids: Collection[str]
) -> dict[str, WorkSummary]:
    """The jobs and batches of ``job_ids`` and ``batch_ids`` that still exist, by id."""
    found: dict[str, WorkSummary] = {}
    if job_ids:
        for job in session.scalars(select(Job).where(Job.id.in_(list(job_ids)))):
            found[job.id] = WorkSummary(
                job.id,
                job.kind,
                job.status,
                job.images_to_generate,
                job.error,
                _seconds(job.started_at, job.completed_at),
            )
    if batch_ids:
        for batch in session.scalars(select(Batch).where(Batch.id.in_(list(batch_ids)))):
            found[batch.id] = WorkSummary(
                batch.id,
                "batch",
                batch.status,
                batch.total_images,
                None,
                _seconds(batch.started_at, batch.completed_at),
            )
    return found


def find_job(session: Session, job_id: str) -> Job | None:
    """A job by id, unscoped: for a domain whose own (account-scoped) row names the job."""
    return session.get(Job, job_id)


def merge_params(session: Session, job_id: str, **values: Any) -> None:
    """Add ``values`` to a job's stored parameters (what its poll shows beside the results),
    for a kind that records what a delivered output learnt (an ad pack's page facts)."""
    job = session.get(Job, job_id)
    if job is not None:
        job.params = {**(job.params or {}), **values}


def add_usage(session: Session, job_id: str, position: int, usage: dict[str, Any]) -> None:
    """Note what a routed output cost at its provider (provider, seconds, the provider's own
    figures) in the job's ``provider_usage``, which its poll shows."""
    job = session.get(Job, job_id)
    if job is not None:
        params = dict(job.params or {})
        params["provider_usage"] = [
            *params.get("provider_usage", []),
            {"position": position, **usage},
        ]
        job.params = params


def status_of_job(job_id: QueryableAttribute[str | None]) -> ScalarSelect[str]:
    """The status of the job ``job_id`` names, as a column of another domain's query (None
    when there is none)."""
    return select(Job.status).where(Job.id == job_id).scalar_subquery()


def delete_job(session: Session, job_id: str) -> list[str]:
    """Delete a terminal job and its result rows; returns the stored result keys (the caller
    deletes the files after its commit)."""
    keys = list(session.scalars(select(JobResult.key).where(JobResult.job_id == job_id)))
    session.execute(delete(JobResult).where(JobResult.job_id == job_id))
    session.execute(delete(Job).where(Job.id == job_id))
    return keys


def get_numbered_job(session: Session, user_id: int, number: int, kind: str | None = None) -> Job:
    """The job shown under an integer id (``jobs.number``) on the surfaces that use one."""
    return _owned_job(session, user_id, Job.number == number, kind)


def list_jobs(
    session: Session, user_id: int, limit: int, offset: int, status: str | None
) -> Sequence[Job]:
    return page(session, _owned_jobs(user_id), Job, limit, offset, status)


Row = TypeVar("Row", Job, Batch)


def page(
    session: Session,
    owned: Select[Row],
    table: type[Row],
    limit: int,
    offset: int,
    status: str | None,
) -> Sequence[Row]:
    """One page of an account's jobs or batches (``status``: only those), newest first."""
    if status:
        owned = owned.where(table.status == status)
    order = (table.created_at.desc(), table.id)
    return session.scalars(owned.order_by(*order).limit(limit).offset(offset)).all()


def results_of(
    session: Session, signer: UrlSigner, job: Job, base_url: str | None = None
) -> list[JobResultOut]:
    """The job's results with fresh signed URLs."""
    base = (base_url or job.base_url).rstrip("/")
    rows = session.scalars(
        select(JobResult).where(JobResult.job_id == job.id).order_by(JobResult.position)
    ).all()
    return [
        JobResultOut(scene=r.scene, url=base + signer.path_for(r.key), created_at=r.created_at)
        for r in rows
    ]


def job_status(session: Session, signer: UrlSigner, job: Job, base_url: str) -> JobStatus:
    """The body of ``GET /api/v2/jobs/{job_id}``."""
    return JobStatus.of(job, results_of(session, signer, job, base_url))
