"""Request and response models of marketing generation: the video job (v2 and the JWT
try-on surface), quick videos and scripts."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from pixelmill.schemas import Timestamp

Aspect = Literal["9:16", "1:1", "16:9"]
Tone = Literal["enthusiastic", "casual", "professional", "problem-solution"]

MIN_DURATION, MAX_DURATION = 3, 60


class VideoCreate(BaseModel):
    """``POST /api/v2/generate/video``."""

    image_url: str | None = Field(None, description="the still image (a person or a product)")
    image_base64: str | None = Field(None, description="the image, base64, instead of a URL")
    script: str = Field(
        "",
        max_length=4000,
        description="what the voice says; empty: a script is written for `duration` seconds",
    )
    duration: int = Field(
        5,
        ge=MIN_DURATION,
        le=MAX_DURATION,
        description="seconds of speech a written script aims at (a given script sets its own)",
    )
    aspect: Aspect = "9:16"
    aspect_ratio: Aspect | None = Field(None, description="`aspect`'s other name")
    tone: Tone = "enthusiastic"
    subtitles: bool = Field(False, description="burn the words into the video")
    product_name: str | None = Field(None, max_length=200)
    webhook_url: str | None = None


class VideoJobCreated(BaseModel):
    """The 202 body of a video job create."""

    job_id: int
    status: str
    poll_url: str
    credits_reserved: int
    credits_remaining: int
    message: str = "video job created"


class VideoJobStatus(BaseModel):
    """A video job (``GET /api/v2/jobs/video/{job_id}``, ``GET /api/tryon/video-status/...``)."""

    job_id: int
    status: str = Field(description="pending, processing, completed or failed")
    current_step: str
    retry_count: int
    video_url: str | None = None
    error_message: str | None = None
    credits_reserved: int
    credits_used: int
    duration_seconds: float | None = None
    script: str | None = None
    aspect: str
    details: dict[str, object] = Field(default_factory=dict)
    created_at: Timestamp
    completed_at: Timestamp | None = None


class TryOnVideoCreated(BaseModel):
    """``POST /api/tryon/create-video``."""

    success: bool = True
    job_id: int
    status: str
    credits_used: int = Field(description="credits reserved for the job (taken when it ends)")
    credits_reserved: int
    message: str
    poll_url: str


class QuickVideoResult(BaseModel):
    success: bool = True
    video_url: str
    duration_seconds: int
    credits_used: int
    credits_remaining: int | None = None
    details: dict[str, object] = Field(default_factory=dict)


class ScriptOut(BaseModel):
    script: str
    product_name: str
    product_description: str
    duration_seconds: int
    word_count: int
    details: dict[str, object] = Field(default_factory=dict)
