"""The jobs tasks, thin: open a session, call the service. The wiring (``pixelmill.worker``)
binds them to their names."""

from __future__ import annotations

from pixelmill.jobs.runner import JobRunner
from pixelmill.jobs.service import TASK, JobBackends
from pixelmill.jobs.sweeper import sweep_jobs

RUN = TASK


def run_job(runner: JobRunner, job_id: str) -> str | None:
    """``"jobs.run"``: run (or resume) one job; None when this delivery had nothing to do."""
    return runner.run(job_id)


def sweep(
    backends: JobBackends, *, dispatch_timeout_seconds: float, max_attempts: int
) -> dict[str, int]:
    """Stranded jobs back on the queue, or failed after ``max_attempts`` runs."""
    with backends.db.transaction() as session:
        return sweep_jobs(
            session,
            backends,
            dispatch_timeout_seconds=dispatch_timeout_seconds,
            max_attempts=max_attempts,
        )
