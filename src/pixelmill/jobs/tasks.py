"""The jobs tasks, thin: open a session, call the service. The wiring (``pixelmill.worker``)
binds them to their names (``"jobs.run"``: :meth:`pixelmill.jobs.runner.JobRunner.run`)."""

from __future__ import annotations

from pixelmill.jobs.service import TASK, JobBackends
from pixelmill.jobs.sweeper import sweep_jobs

RUN = TASK


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
