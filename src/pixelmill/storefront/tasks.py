"""The storefront's part of the ``jobs.run`` task: after a run of an enrichment job, settle
it (fail what never ran, log the activity, emit the event) in a short transaction of its own.
The wiring (``pixelmill.worker``) binds it."""

from __future__ import annotations

from pixelmill.jobs.runner import JobRunner
from pixelmill.jobs.service import JobBackends
from pixelmill.storefront import service


def run_job(runner: JobRunner, backends: JobBackends, job_id: str) -> str | None:
    """``"jobs.run"``: run (or resume) one job, then settle it when it is an enrichment job
    that ended."""
    status = runner.run(job_id)
    with backends.db.transaction() as session:
        service.settle_job(session, backends, job_id)
    return status
