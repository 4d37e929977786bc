"""Typed views of the server's responses.

Every model accepts (and keeps) fields it does not name, so a newer server never breaks an
older client; fields the server may leave out are optional. Times are parsed to ``datetime``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

TERMINAL_JOB_STATES = frozenset({"completed", "failed"})


class Model(BaseModel):
    """Base of every response model: unknown fields are kept (``model_extra``)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


# ---- account ----------------------------------------------------------------------------------


class RateLimits(Model):
    requests_per_minute: int | None = None
    requests_per_day: int | None = None
    max_file_size_mb: int | None = None


class UserInfo(Model):
    """``GET /api/v1/user``."""

    id: int
    email: str
    credits: int
    is_active: bool = True


class Account(UserInfo):
    """``GET /api/v2/account``: the key's account, balance and plan limits."""

    subscription_tier: str = "free"
    created_at: datetime | None = None
    total_purchased: int | None = None
    rate_limits: RateLimits | None = None


class CreditBalance(Model):
    """``GET /api/v1/credits``."""

    credits: int
    total_purchased: int = 0


# ---- synchronous processing -------------------------------------------------------------------


class Variant(Model):
    label: str | None = None
    url: str | None = None
    score: float | None = None


class ProcessingResult(Model):
    """A v2 synchronous result (remove-background, upscale, enhance, ...). ``details.method``
    names what really ran; ``analysis`` and ``prompts`` are set by analyze and
    image-to-prompt."""

    status: str = "success"
    processing_id: str
    result_url: str | None = None
    credits_used: int = 0
    credits_remaining: int | None = None
    processing_time: float | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    analysis: dict[str, Any] | None = None
    prompts: dict[str, Any] | None = None

    @property
    def method(self) -> str | None:
        value = self.details.get("method")
        return value if isinstance(value, str) else None

    @property
    def format(self) -> str | None:
        value = self.details.get("format")
        return value if isinstance(value, str) else None

    @property
    def variants(self) -> list[Variant]:
        raw = self.details.get("variants") or []
        return [Variant.model_validate(v) for v in raw if isinstance(v, dict)]


class V1Result(Model):
    """A v1 multipart result: the image itself in base64 (``result``)."""

    success: bool = True
    processing_id: str
    result: str
    result_url: str | None = None
    credits_used: int = 0
    credits_remaining: int | None = None
    processing_time: float | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class HistoryItem(Model):
    processing_id: str
    operation: str
    surface: str | None = None
    status: str
    credits_used: int = 0
    processing_time: float | None = None
    original_size: list[int | None] = Field(default_factory=list)
    result_format: str | None = None
    result_url: str | None = None
    error: str | None = None
    created_at: datetime | None = None
    # Servers that list every change to the balance (jobs, batches, grants, purchases) say
    # which it is and its signed change; older servers list synchronous calls only.
    kind: str = "sync"
    credits: int | None = None
    credits_refunded: int = 0
    description: str | None = None


class History(Model):
    """``GET /api/v1/history``, newest first."""

    items: list[HistoryItem] = Field(default_factory=list)
    total: int = 0
    limit: int = 50
    offset: int = 0


# ---- jobs -------------------------------------------------------------------------------------


class JobCreated(Model):
    """The 202 answer of a job create (``/api/v2/jobs``, ``/api/v2/generate/*``)."""

    job_id: str
    status: str
    poll_url: str | None = None
    images_to_generate: int | None = None
    credits_reserved: int = 0
    credits_remaining: int | None = None
    product_uuid: str | None = None
    warnings: list[str] | None = None


class JobProgress(Model):
    completed: int = 0
    failed: int = 0
    total: int = 0


class JobResult(Model):
    scene: str | None = None
    url: str
    created_at: datetime | None = None


class JobFailure(Model):
    """An output the job did not deliver (nothing charged for it): its 0-based index in the
    job and why."""

    index: int
    reason: str = ""


class JobSummary(Model):
    """An item of ``GET /api/v2/jobs``."""

    job_id: str
    status: str
    type: str | None = None
    images_to_generate: int | None = None
    credits_used: int = 0
    batch_id: str | None = None
    created_at: datetime | None = None
    completed_at: datetime | None = None

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL_JOB_STATES


class Job(JobSummary):
    """``GET /api/v2/jobs/{id}``: poll until ``status`` is ``completed`` or ``failed``."""

    progress: JobProgress = Field(default_factory=JobProgress)
    credits_reserved: int = 0
    results: list[JobResult] = Field(default_factory=list)
    error: str | None = None
    product_uuid: str | None = None
    started_at: datetime | None = None
    warnings: list[str] | None = None
    failures: list[JobFailure] | None = Field(
        default_factory=list, description="outputs not delivered, with why ([] when none)"
    )


# ---- video and ad packs (integer job ids) ----------------------------------------------------


class VideoJobCreated(Model):
    """``POST /api/v2/generate/video`` (202)."""

    job_id: int
    status: str = "pending"
    poll_url: str | None = None
    credits_reserved: int = 0
    credits_remaining: int | None = None


class VideoJob(Model):
    """``GET /api/v2/jobs/video/{job_id}``: ``video_url`` (an MP4) once ``completed``."""

    job_id: int
    status: str
    current_step: str | None = None
    video_url: str | None = None
    error_message: str | None = None
    credits_reserved: int = 0
    credits_used: int = 0
    duration_seconds: float | None = None
    script: str | None = None
    aspect: str | None = None

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL_JOB_STATES

    @property
    def error(self) -> str | None:
        return self.error_message


class AdPackCreated(Model):
    """``POST /api/v2/ad-pack`` (202): ``parts`` is the price of each part included."""

    job_id: int
    status: str = "pending"
    poll_url: str | None = None
    credits_reserved: int = 0
    credits_remaining: int | None = None
    parts: dict[str, int] = Field(default_factory=dict)
    warnings: list[str] | None = None


class StaticAd(Model):
    platform: str
    url: str
    width: int | None = None
    height: int | None = None


class AdPack(Model):
    """``GET /api/v2/ad-pack/{job_id}``: the parts so far (``progress``: completed, failed,
    total)."""

    job_id: int
    status: str
    product_images: list[str] = Field(default_factory=list)
    static_ads: list[StaticAd] = Field(default_factory=list)
    captions: list[dict[str, Any]] = Field(default_factory=list)
    ugc_video_url: str | None = None
    credits_reserved: int = 0
    credits_used: int = 0
    parts: dict[str, int] = Field(default_factory=dict)
    progress: dict[str, int] = Field(default_factory=dict)
    error: str | None = None
    warnings: list[str] | None = None

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL_JOB_STATES


# ---- library ----------------------------------------------------------------------------------


class Product(Model):
    uuid: str
    name: str | None = None
    filename: str | None = None
    category: str | None = None
    description: str | None = None
    image_url: str | None = None
    width: int | None = None
    height: int | None = None
    created_at: datetime | None = None


class Avatar(Model):
    uuid: str
    name: str | None = None
    gender: str | None = None
    kind: str | None = None
    image_url: str | None = None
    created_at: datetime | None = None


class PublicAvatar(Model):
    """A gallery model of ``GET /api/v2/avatars/public``; its ``id`` is a ``model_id``."""

    id: str
    name: str | None = None
    gender: str | None = None
    prompt: str | None = None
    image_url: str | None = None


class AvatarJob(Job):
    """``GET /api/v2/jobs/avatar/{id}``."""

    generation_type: str | None = None
    avatars: list[Avatar] = Field(default_factory=list)


class Deleted(Model):
    """The answer of a delete (``id`` or ``uuid`` of what was removed)."""

    id: int | str | None = None
    uuid: str | None = None
    deleted: bool = True


# ---- batches ----------------------------------------------------------------------------------


class BatchCreated(Model):
    batch_id: str
    status: str
    total_images: int
    images_to_generate: int
    credits_reserved: int
    credits_remaining: int | None = None
    poll_url: str | None = None


class BatchProgress(Model):
    completed: int = 0
    failed: int = 0
    pending: int = 0
    total: int = 0


class BatchImageResult(Model):
    scene: str | None = None
    url: str


class BatchImage(Model):
    id: str | None = None
    job_id: str | None = None
    status: str
    error: str | None = None
    results: list[BatchImageResult] = Field(default_factory=list)
    failures: list[JobFailure] | None = Field(default_factory=list)


class BatchSummary(Model):
    """An item of ``GET /api/v2/batches``."""

    batch_id: str
    status: str
    cancelled: bool = False
    total_images: int = 0
    progress: BatchProgress = Field(default_factory=BatchProgress)
    credits_reserved: int = 0
    credits_used: int = 0
    created_at: datetime | None = None
    completed_at: datetime | None = None

    @property
    def finished(self) -> bool:
        return self.status == "completed"


class Batch(BatchSummary):
    """``GET /api/v2/batches/{id}``; ``completed`` is final (``cancelled`` tells a cancel)."""

    images_per_product: int | None = None
    started_at: datetime | None = None
    images: list[BatchImage] = Field(default_factory=list)


# ---- webhooks ---------------------------------------------------------------------------------


class Webhook(Model):
    """A registered endpoint; ``secret`` is present only in the create answer."""

    id: int
    url: str
    created_at: datetime | None = None
    secret: str | None = None


class DeliveryAttempt(Model):
    number: int
    status_code: int | None = None
    duration_ms: int = 0
    error: str | None = None
    response_body: str = ""
    created_at: datetime | None = None


class Delivery(Model):
    """One webhook message sent for the account and its attempts
    (``GET /api/v2/webhooks/deliveries``)."""

    id: str
    event: str
    url: str
    status: str
    attempts: int = 0
    next_attempt_at: datetime | None = None
    created_at: datetime | None = None
    delivered_at: datetime | None = None
    payload: dict[str, Any] = Field(default_factory=dict)
    attempt_log: list[DeliveryAttempt] = Field(default_factory=list)


class SigningSecret(Model):
    """The account's own secret: it signs deliveries to a request's ``webhook_url`` while no
    webhook is registered."""

    secret: str
