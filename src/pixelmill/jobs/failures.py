"""Why an output of a multi-output job is missing: each output the run could not deliver is
kept as ``{"index": position, "reason": sentence}`` in the job's ``params["failures"]``
(written in the transaction that counts the failure, so a poll sees it as soon as the
progress does), and read back by every poll, the ``job.*`` webhook, the CLI and the
dashboard.

``index`` is the output's 0-based position in the job's plan (``results`` are listed in that
order); a resumed run that delivers an output which failed before removes its failure, and
one that fails it again replaces the reason, so an index is listed at most once and never
beside a result of the same position. A job that delivered some of its outputs says so in
its ``warnings`` ("2 of 4 outputs failed; see failures"); one that delivered none carries the
last reason in its ``error``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from pixelmill.db.models import Job

KEY = "failures"
MAX_REASON = 300
"""A reason is a sentence, not a traceback: longer ones are cut (with an ellipsis)."""


class JobFailure(BaseModel):
    """One output a job could not deliver, and why (nothing is charged for it)."""

    index: int = Field(description="the output's 0-based position in the job")
    reason: str = Field(description="why it was not delivered, in a sentence")


def short(reason: str) -> str:
    reason = " ".join(reason.split()) or "unknown error"
    return reason if len(reason) <= MAX_REASON else reason[: MAX_REASON - 1].rstrip() + "…"


def with_failure(params: dict[str, Any] | None, index: int, reason: str) -> dict[str, Any]:
    """``params`` with output ``index`` failed for ``reason`` (replacing an earlier reason)."""
    kept = [f for f in failures_in(params) if f.index != index]
    kept.append(JobFailure(index=index, reason=short(reason)))
    kept.sort(key=lambda f: f.index)
    return {**(params or {}), KEY: [f.model_dump() for f in kept]}


def without_failure(params: dict[str, Any] | None, index: int) -> dict[str, Any] | None:
    """``params`` with output ``index``'s failure removed (it was delivered after all), or
    None when there was none (nothing to write)."""
    found = failures_in(params)
    if not any(f.index == index for f in found):
        return None
    kept = [f.model_dump() for f in found if f.index != index]
    return {**(params or {}), KEY: kept}


def failures_in(params: dict[str, Any] | None) -> list[JobFailure]:
    """The failures stored in a job's parameters (malformed entries are skipped)."""
    out: list[JobFailure] = []
    for item in (params or {}).get(KEY) or []:
        if isinstance(item, dict) and isinstance(item.get("index"), int):
            out.append(JobFailure(index=item["index"], reason=str(item.get("reason") or "")))
    return out


def job_failures(job: Job) -> list[JobFailure]:
    return failures_in(job.params)


def partial_warning(job: Job) -> str | None:
    """The warning of a completed job that missed some outputs ("2 of 4 outputs failed; see
    failures"), or None."""
    failed = len(job_failures(job))
    if not failed or job.status != "completed":
        return None
    total = max(job.images_to_generate, failed)
    return f"{failed} of {total} output{'s' if total != 1 else ''} failed; see failures"
