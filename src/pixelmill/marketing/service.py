"""Video jobs (``kind="video"``): one MP4 per job, 50 credits reserved at create and captured
when the video is stored (released when it fails); shown under an integer id
(``jobs.number``). Quick videos are priced here too: 5 credits per started 10 seconds."""

from __future__ import annotations

import math
from typing import Any

from sqlalchemy.orm import Session

from pixelmill.credits.pricing import OPERATION_PRICES
from pixelmill.db.models import Job
from pixelmill.jobs import lifecycle
from pixelmill.jobs import service as jobs
from pixelmill.jobs.service import JobBackends
from pixelmill.marketing.schemas import VideoJobCreated, VideoJobStatus
from pixelmill.marketing.scripts import count_words
from pixelmill.marketing.video import MAX_SCRIPT_WORDS
from pixelmill.storage import UrlSigner

VIDEO_KIND = "video"
QUICK_VIDEO_MAX_WORDS = 150
QUICK_VIDEO_STEP_SECONDS = 10

_STATUS = {lifecycle.PENDING: "pending", lifecycle.QUEUED: "pending"}
_STEP = {
    lifecycle.PENDING: "queued",
    lifecycle.QUEUED: "queued",
    lifecycle.PROCESSING: "writing the script, speaking and rendering",
    lifecycle.COMPLETED: "done",
    lifecycle.FAILED: "failed",
}


def video_price() -> int:
    """What a video job costs (``OPERATION_PRICES["video"]``)."""
    return OPERATION_PRICES["video"]


def quick_video_price(seconds: float) -> int:
    """5 credits per started 10 seconds of video, at least 5."""
    steps = max(1, math.ceil(round(seconds, 3) / QUICK_VIDEO_STEP_SECONDS))
    return steps * OPERATION_PRICES["quick_video"]


def check_script(script: str, limit: int = MAX_SCRIPT_WORDS) -> str:
    """The script with its whitespace normalised; ValueError when it has too many words."""
    text = " ".join(script.split())
    if count_words(text) > limit:
        raise ValueError(f"the script has more than {limit} words")
    return text


def create_video_job(
    session: Session,
    backends: JobBackends,
    *,
    user_id: int,
    input_key: str,
    script: str,
    duration: int,
    aspect: str,
    tone: str,
    subtitles: bool,
    base_url: str,
    product_name: str | None = None,
    webhook_url: str | None = None,
    surface: str = "v2",
) -> tuple[Job, int]:
    """Reserve the video's price and write the ``pending`` job (dispatched after commit)."""
    params: dict[str, Any] = {
        "script": script,
        "duration": duration,
        "aspect": aspect,
        "tone": tone,
        "subtitles": subtitles,
        "product_name": product_name,
        "surface": surface,
    }
    return jobs.create_job(
        session,
        backends,
        user_id=user_id,
        kind=VIDEO_KIND,
        count=1,
        price=video_price(),
        base_url=base_url,
        input_key=input_key,
        params=params,
        webhook_url=webhook_url,
        numbered=True,
    )


def poll_url(base_url: str, job: Job, surface: str = "v2") -> str:
    path = "/api/v2/jobs/video/" if surface == "v2" else "/api/tryon/video-status/"
    return base_url.rstrip("/") + f"{path}{job.number}"


def created(job: Job, remaining: int, base_url: str) -> VideoJobCreated:
    assert job.number is not None
    return VideoJobCreated(
        job_id=job.number,
        status=_STATUS.get(job.status, job.status),
        poll_url=poll_url(base_url, job),
        credits_reserved=job.credits_reserved,
        credits_remaining=remaining,
    )


def video_status(
    session: Session, signer: UrlSigner, user_id: int, number: int, base_url: str
) -> VideoJobStatus:
    """A video job of the account by its integer id (another account's: 404)."""
    job = jobs.get_numbered_job(session, user_id, number, kind=VIDEO_KIND)
    results = jobs.results_of(session, signer, job, base_url)
    params = job.params or {}
    video: dict[str, Any] = dict(params.get("video") or {})
    details: dict[str, object] = {
        k: video[k]
        for k in (
            "method",
            "voice",
            "mode",
            "script_method",
            "timings",
            "provider",
            "provider_failed",
        )
        if k in video
    }
    assert job.number is not None
    return VideoJobStatus(
        job_id=job.number,
        status=_STATUS.get(job.status, job.status),
        current_step=_STEP.get(job.status, job.status),
        retry_count=max(0, job.attempts - 1),
        video_url=results[0].url if results else None,
        error_message=job.error,
        credits_reserved=job.credits_reserved,
        credits_used=job.credits_used,
        duration_seconds=video.get("duration_seconds"),
        script=video.get("script") or params.get("script") or None,
        aspect=str(params.get("aspect", "9:16")),
        details=details,
        created_at=job.created_at,
        completed_at=job.completed_at,
    )
