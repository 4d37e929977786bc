"""The state machine and the run protocol: legal transitions only, a duplicate delivery runs a
job once, a run that lost its claim writes nothing, and the sweeper re-dispatches a job whose
worker died after claiming it (resumed, each scene charged once) or fails it after too many
runs (its credits released)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import partial

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update
from sqlalchemy.orm import Session

from pixelmill.db.base import utcnow
from pixelmill.db.models import Job
from pixelmill.engines.base import OutputImage, PlannedImage
from pixelmill.generation.scenes import SCENES_KIND, scene_price
from pixelmill.jobs import lifecycle, service
from pixelmill.jobs.runner import JobKind, Rendered
from pixelmill.jobs.service import Claim, LostClaim
from pixelmill.resources import Resources
from pixelmill.worker import job_runner
from pixelmill.worker import sweep as sweep_jobs
from tests.support.accounts import Account, make_account
from tests.support.api import upload_product, wait_terminal
from tests.support.credits import balance_of, held_reservations, ledger_consistent

pytestmark = pytest.mark.both_databases


def test_transition_table() -> None:
    assert lifecycle.JOB_STATES == ("pending", "queued", "processing", "completed", "failed")
    for terminal in lifecycle.TERMINAL:
        assert lifecycle.JOB_TRANSITIONS[terminal] == frozenset()
    with pytest.raises(lifecycle.IllegalTransition):
        lifecycle.move_job(None, "x", ["completed"], "processing")  # type: ignore[arg-type]
    with pytest.raises(lifecycle.IllegalTransition):
        lifecycle.move_batch(None, "x", ["completed"], "pending")  # type: ignore[arg-type]


def run_job(resources: Resources, job_id: str) -> str | None:
    return job_runner(resources).run(job_id)


def claim(resources: Resources, job_id: str, lease: float) -> Claim | None:
    with resources.db.transaction() as session:
        return service.claim(session, job_id, lease)


def record(resources: Resources, run: Claim, position: int, scene: str, key: str) -> bool:
    """One delivered result in its own transaction, as the runner records it."""
    try:
        with resources.db.transaction() as session:
            service.record_result(session, run, position, scene, key, 60.0)
    except LostClaim:
        return False
    return True


def finish(resources: Resources, run: Claim) -> str | None:
    with resources.db.transaction() as session:
        return service.finish(session, resources.jobs, run)


def _create(client: TestClient, resources: Resources, acct: Account, n: int) -> str:
    """A job row as the API writes it, without a queue: the test plays the worker."""
    product = upload_product(client, acct)
    with resources.db.transaction() as session:
        job, _ = service.create_job(
            session,
            resources.jobs,
            user_id=acct.id,
            kind=SCENES_KIND,
            count=n,
            price=scene_price(n),
            base_url="http://testserver",
            input_key=f"products/{product['uuid']}.png",
            test=False,
        )
        session.info.clear()  # drop the after-commit dispatch: nobody else runs this job
        return job.id


def test_duplicate_delivery_runs_once(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=10)
    job_id = _create(client, resources, acct, 2)
    assert run_job(resources, job_id) == "completed"
    assert run_job(resources, job_id) is None
    job = wait_terminal(client, acct, job_id)
    assert job["credits_used"] == 2 and len(job["results"]) == 2
    assert balance_of(resources, acct.id) == 8
    assert ledger_consistent(resources, acct.id)


def test_stale_run_cannot_write_and_sweeper_resumes(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    job_id = _create(client, resources, acct, 3)
    lease = 60.0
    # A worker claims the job, delivers one scene, then dies.
    dead = claim(resources, job_id, lease)
    assert dead is not None and dead.token == 1
    assert claim(resources, job_id, lease) is None
    assert record(resources, dead, 0, "studio", "results/x.jpg")
    with resources.db.transaction() as session:
        session.execute(
            update(Job).where(Job.id == job_id).values(lease_expires_at=utcnow() - timedelta(1))
        )
    counts = sweep_jobs(resources)  # the inline queue runs it again
    assert counts["requeued"] == 1
    job = wait_terminal(client, acct, job_id)
    assert job["status"] == "completed"
    assert job["credits_used"] == 3 and len(job["results"]) == 3
    assert job["results"][0]["scene"] == "studio"  # the dead run's delivery was kept
    # The dead run wakes up: its token is stale, it can write nothing.
    assert not record(resources, dead, 1, "late", "results/y.jpg")
    assert finish(resources, dead) is None
    assert balance_of(resources, acct.id) == 7
    assert held_reservations(resources, acct.id) == 0
    assert ledger_consistent(resources, acct.id)


def test_sweeper_fails_a_job_after_max_attempts(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=10)
    job_id = _create(client, resources, acct, 4)
    run = claim(resources, job_id, 60)
    assert run is not None
    assert record(resources, run, 0, "studio", "results/z.jpg")
    with resources.db.transaction() as session:
        session.execute(
            update(Job)
            .where(Job.id == job_id)
            .values(
                attempts=resources.settings.job_max_attempts,
                lease_expires_at=utcnow() - timedelta(1),
            )
        )
    assert sweep_jobs(resources)["failed"] == 1
    job = wait_terminal(client, acct, job_id)
    assert job["status"] == "failed" and "stopped" in job["error"]
    # The one delivered scene stays charged; the other three come back.
    assert job["credits_used"] == 1
    assert balance_of(resources, acct.id) == 9
    assert held_reservations(resources, acct.id) == 0
    assert ledger_consistent(resources, acct.id)


def test_sweeper_redispatches_a_lost_pending_job(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=10)
    job_id = _create(client, resources, acct, 1)
    stale = utcnow() - timedelta(seconds=resources.settings.job_dispatch_timeout_seconds + 1)
    with resources.db.transaction() as session:
        session.execute(update(Job).where(Job.id == job_id).values(updated_at=stale))
    assert sweep_jobs(resources)["redispatched"] == 1
    assert wait_terminal(client, acct, job_id)["status"] == "completed"


@dataclass(frozen=True)
class SlowKind:
    """A kind whose every output takes longer than the lease to render."""

    inner: JobKind
    seconds: float
    result_format: str = "jpeg"
    subject: str = "product"

    def plan(self, run: Claim) -> list[PlannedImage]:
        def slow(item: PlannedImage) -> OutputImage:
            time.sleep(self.seconds)
            return item.render()

        return [
            PlannedImage(p.position, p.label, partial(slow, p))  # type: ignore[arg-type]
            for p in self.inner.plan(run)
        ]

    def record(self, session: Session, run: Claim, rendered: Rendered) -> None:
        return None


def test_a_live_run_keeps_its_job_by_heartbeat(client: TestClient, resources: Resources) -> None:
    """Outputs that take 2.5x the lease each: the heartbeat renews it, so sweeps during the run
    take nothing away and the job is run once. The lease leaves a loaded two-core CI machine
    1.5 s between a renewal and its deadline (0.3 s was too little: a renewal that waited on
    the sweeper's write lock and a busy CPU once came late and the sweeper took the job; 0.9 s
    failed once, on a machine ~2.3x slower than usual, during a full CI run)."""
    acct = make_account(resources, credits=10)
    job_id = _create(client, resources, acct, 2)
    base = job_runner(resources)
    runner = replace(base, lease_seconds=2.0, kinds={"scenes": SlowKind(base.kinds["scenes"], 5.0)})
    done = threading.Event()
    swept: list[dict[str, int]] = []

    def sweeping() -> None:
        while not done.wait(0.15):
            swept.append(sweep_jobs(resources))

    sweeper = threading.Thread(target=sweeping)
    sweeper.start()
    try:
        assert runner.run(job_id) == "completed"
    finally:
        done.set()
        sweeper.join()
    assert len(swept) >= 10 and all(s["requeued"] == 0 for s in swept)
    with resources.db.read() as session:
        job = session.get(Job, job_id)
        assert job is not None and job.attempts == 1 and job.lease_expires_at is None
    assert balance_of(resources, acct.id) == 8 and ledger_consistent(resources, acct.id)
