"""Request and response models of jobs, scene generation and batches. Responses are built from
the ORM rows (``from_attributes``); times render as ISO 8601 with a ``Z``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from pixelmill.categories import LIBRARY_CATEGORIES
from pixelmill.db.models import Batch, Job
from pixelmill.jobs.failures import JobFailure, job_failures, partial_warning
from pixelmill.schemas import Schema, TestFlag, Timestamp

# ---- requests -----------------------------------------------------------------------------


class JobCreate(BaseModel):
    product_image: str = Field(min_length=1, description="the product image as plain base64")
    product_filename: str = Field("product.png", max_length=255)
    category: str = Field("other", description=", ".join(LIBRARY_CATEGORIES))
    model_id: str | None = Field(
        None,
        description="a public model id (GET /api/v2/avatars/public) or one of your avatar "
        "UUIDs: product photos with that person (try-on for clothing)",
    )
    model_url: str | None = Field(
        None, description="a photo of a person (public http(s) URL) to use as the model"
    )
    images_to_generate: int = Field(6, ge=1, le=12, description="1 credit per image")
    custom_prompt: str | None = Field(
        None, max_length=2000, description="with a model: scene keywords (beach, office, ...)"
    )
    webhook_url: str | None = None


class ScenesCreate(BaseModel):
    product_uuid: str = Field(description="a product saved with POST /api/v2/products")
    num_scenes: int = Field(6, ge=1, le=12, description="1 credit per scene")
    category: str | None = Field(None, description="default: the product's category")
    webhook_url: str | None = Field(None, description="job.completed / job.failed go here")


class ScenesFromUrlCreate(BaseModel):
    image_url: str = Field(min_length=1, description="public http(s) URL of the product image")
    num_scenes: int = Field(4, ge=1, le=12, description="1 credit per scene")
    category: str | None = None
    name: str | None = Field(None, max_length=255)
    webhook_url: str | None = None


class BatchImage(BaseModel):
    id: str = Field(min_length=1, max_length=255, description="your own identifier (SKU)")
    image: str = Field(min_length=1, description="base64 image")
    category: str | None = None


class BatchCreate(BaseModel):
    images: list[BatchImage] = Field(min_length=1, max_length=100)
    images_per_product: int = Field(6, ge=1, le=12)
    webhook_url: str | None = None


# ---- jobs ---------------------------------------------------------------------------------


class JobProgress(BaseModel):
    completed: int
    failed: int
    total: int


class JobResultOut(Schema):
    scene: str = Field(description="the scene's name")
    url: str = Field(description="signed, expiring URL of the image")
    created_at: Timestamp | None = None


class JobCreated(BaseModel):
    """The 202 body of a job create (``job_id``, ``status``, ``poll_url``,
    ``credits_reserved``, ...)."""

    job_id: str
    status: str
    poll_url: str
    images_to_generate: int
    credits_reserved: int
    credits_remaining: int
    product_uuid: str | None = None
    warnings: list[str] | None = Field(
        None, description="request fields this job does not use, and why (never dropped silently)"
    )
    test: TestFlag = False

    @classmethod
    def of(cls, job: Job, remaining: int, base_url: str) -> JobCreated:
        return cls(
            job_id=job.id,
            status=job.status,
            poll_url=base_url.rstrip("/") + f"/api/v2/jobs/{job.id}",
            images_to_generate=job.images_to_generate,
            credits_reserved=job.credits_reserved,
            credits_remaining=remaining,
            product_uuid=job.product_id,
            warnings=job_warnings(job),
            test=job.test,
        )


def job_warnings(job: Job) -> list[str] | None:
    """What the job noted about its request at creation (unused prompt words...) and, once it
    completed without some of its outputs, "2 of 4 outputs failed; see failures"; or None."""
    warnings = [str(w) for w in (job.params or {}).get("warnings") or []]
    partial = partial_warning(job)
    if partial:
        warnings.append(partial)
    return warnings or None


class JobListItem(Schema):
    job_id: str = Field(validation_alias="id")
    status: str
    type: str = Field(validation_alias="kind")
    images_to_generate: int
    credits_used: int
    batch_id: str | None
    created_at: Timestamp | None
    completed_at: Timestamp | None
    test: TestFlag = False


class JobStatus(JobListItem):
    """A job's state; poll until ``status`` is ``completed`` or ``failed``."""

    status: str = Field(description="pending, queued, processing, completed or failed")
    progress: JobProgress
    credits_reserved: int
    results: list[JobResultOut]
    error: str | None
    product_uuid: str | None = Field(validation_alias="product_id")
    started_at: Timestamp | None
    warnings: list[str] | None = Field(
        None,
        description="request fields or prompt words this job does not use, and why; "
        '"2 of 4 outputs failed; see failures" when it completed without some outputs',
    )
    failures: list[JobFailure] = Field(
        default_factory=list,
        description="each output that was not delivered (and not charged): its 0-based index "
        "in the job and the reason, in a sentence; [] when none failed",
    )
    provider_usage: list[dict[str, Any]] | None = Field(
        None,
        description="for outputs made by a generative backend (PIXELMILL_ROUTE_*): each one's "
        "position, provider and model, seconds spent, and what the provider reported "
        "(Replicate predict_time_s, OpenAI token counts)",
    )

    @classmethod
    def of(cls, job: Job, results: list[JobResultOut]) -> JobStatus:
        progress = JobProgress(
            completed=job.progress_completed,
            failed=job.progress_failed,
            total=job.images_to_generate,
        )
        usage = (job.params or {}).get("provider_usage") or None
        return cls.from_row(
            job,
            progress=progress,
            results=results,
            warnings=job_warnings(job),
            failures=job_failures(job),
            provider_usage=usage,
        )


# ---- batches ------------------------------------------------------------------------------


class BatchCreated(BaseModel):
    batch_id: str
    status: str
    total_images: int
    images_to_generate: int
    credits_reserved: int
    credits_remaining: int
    poll_url: str
    test: TestFlag = False

    @classmethod
    def of(cls, batch: Batch, remaining: int, base_url: str) -> BatchCreated:
        return cls(
            batch_id=batch.id,
            status=batch.status,
            total_images=batch.total_images,
            images_to_generate=batch.total_images * batch.images_per_product,
            credits_reserved=batch.credits_reserved,
            credits_remaining=remaining,
            poll_url=base_url.rstrip("/") + f"/api/v2/batches/{batch.id}",
            test=batch.test,
        )


class BatchProgress(BaseModel):
    completed: int
    failed: int
    pending: int
    total: int


class BatchImageResult(BaseModel):
    scene: str
    url: str


class BatchImageStatus(BaseModel):
    id: str | None = Field(description="the caller's id of the image")
    job_id: str
    status: str
    error: str | None
    results: list[BatchImageResult]
    failures: list[JobFailure] = Field(
        default_factory=list,
        description="the image's outputs that were not delivered: index and reason",
    )


class BatchListItem(Schema):
    batch_id: str = Field(validation_alias="id")
    status: str
    cancelled: bool
    total_images: int
    progress: BatchProgress
    credits_reserved: int
    credits_used: int
    created_at: Timestamp | None
    completed_at: Timestamp | None
    test: TestFlag = False


class BatchStatus(BatchListItem):
    """A batch's state; ``completed`` is final (``cancelled`` tells a cancelled batch)."""

    status: str = Field(description="pending, processing or completed")
    images_per_product: int
    started_at: Timestamp | None
    images: list[BatchImageStatus]
