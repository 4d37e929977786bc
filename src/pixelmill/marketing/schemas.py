"""Request and response models of marketing: the video job (v2 and the JWT try-on surface),
quick videos and scripts, platform ads, asset collections and ad packs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from pixelmill.categories import SPEC_CATEGORIES
from pixelmill.engines.ads import PlatformName, StyleName
from pixelmill.jobs.failures import JobFailure
from pixelmill.schemas import Schema, TestFlag, Timestamp

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
    test: TestFlag = False


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
    test: TestFlag = False


class TryOnVideoCreated(BaseModel):
    """``POST /api/tryon/create-video``."""

    success: bool = True
    job_id: int
    status: str
    credits_used: int = Field(description="credits reserved for the job (taken when it ends)")
    credits_reserved: int
    credits_remaining: int = Field(description="the balance after the reservation")
    message: str
    poll_url: str
    test: TestFlag = False


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


# ---- platform ads (JWT, synchronous, free) ---------------------------------------------------


class AdRequest(BaseModel):
    """``POST /api/tryon/generate-ai-ad``."""

    image_url: str = Field(min_length=1, max_length=4096, description="the product photo")
    platform: PlatformName
    headline: str | None = Field(None, max_length=120)
    tagline: str | None = Field(None, max_length=240)
    style: StyleName = "minimal"
    cta: str | None = Field(
        None, max_length=28, description="button text (default 'Shop now'; empty for none)"
    )
    price: str | None = Field(None, max_length=16, description="price badge, e.g. $49")


class AdResult(BaseModel):
    success: bool = True
    ad_url: str
    platform: str
    width: int
    height: int
    credits_used: int = 0
    details: dict[str, object]


# ---- asset collections (JWT, asynchronous) ---------------------------------------------------

if TYPE_CHECKING:
    AssetCategory = str
else:  # the spec's categories, an enum in the OpenAPI document
    AssetCategory = Literal[tuple(c.value for c in SPEC_CATEGORIES)]


class TryOnVideoForm(BaseModel):
    """What identifies a try-on ``create-video`` request (its Idempotency-Key fingerprint)."""

    image_url: str
    script: str
    prompt: str
    tone: str
    duration: int
    enable_subtitles: bool


class AssetCollectionForm(BaseModel):
    """What identifies a start-asset-collection request (its Idempotency-Key fingerprint)."""

    category: str
    product_description: str | None
    catalog_product_id: int | None
    image_sha256: str


class AssetCollectionCreated(BaseModel):
    collection_id: int
    status: str
    credits_reserved: int
    credits_remaining: int
    poll_url: str
    images: list[str] = Field(description="what the collection will hold, in order")
    test: TestFlag = False


class CollectionImage(BaseModel):
    type: Literal["scene", "silo", "ad"]
    label: str
    url: str


class AssetCollectionStatus(BaseModel):
    collection_id: int
    status: str
    category: str
    credits_reserved: int
    credits_used: int
    progress: dict[str, int]
    images: list[CollectionImage]
    error: str | None = None
    created_at: Timestamp
    started_at: Timestamp | None = None
    completed_at: Timestamp | None = None


# ---- ad packs (API key, asynchronous) --------------------------------------------------------


class AdPackCreate(BaseModel):
    """``POST /api/v2/ad-pack``: a product page URL and the parts to make."""

    url: str = Field(min_length=1, max_length=4096, description="the product page (http or https)")
    include_images: bool = Field(True, description="6 scene photos (6 credits)")
    include_ads: bool = Field(True, description="8 static ads, one per platform (2 credits)")
    include_captions: bool = Field(True, description="captions per platform (1 credit)")
    include_animations: bool = Field(
        False, description="not produced by this server: accepted and reported in warnings"
    )
    include_video: bool = Field(True, description="a UGC-style product video (50 credits)")
    webhook_url: str | None = Field(None, max_length=2048)


class AdPackCreated(BaseModel):
    job_id: int
    status: str
    poll_url: str
    credits_reserved: int
    credits_remaining: int
    parts: dict[str, int] = Field(description="the price of each part included")
    warnings: list[str] | None = None
    test: TestFlag = False


class ScrapedProduct(BaseModel):
    """A product's facts as read from its page (JSON-LD, OpenGraph or the HTML)."""

    name: str
    description: str
    brand: str
    price: str
    currency: str
    category: str
    images: list[str]
    url: str
    source: str = Field(description="where the facts came from: json-ld, opengraph or html")


class StaticAd(BaseModel):
    platform: str
    url: str
    width: int
    height: int
    style: str


class CaptionOut(BaseModel):
    platform: str
    text: str
    hashtags: list[str]
    characters: int
    limit: int


class AdPackStatus(Schema):
    job_id: int
    status: str
    url: str
    product: ScrapedProduct | None
    product_images: list[str]
    ugc_video_url: str | None
    static_ads: list[StaticAd]
    captions: list[CaptionOut]
    credits_reserved: int
    credits_used: int
    parts: dict[str, int]
    progress: dict[str, int]
    error: str | None
    warnings: list[str] | None = None
    failures: list[JobFailure] = Field(
        default_factory=list,
        description="each part not delivered (not charged): its index in the pack and why",
    )
    details: dict[str, str]
    created_at: Timestamp
    started_at: Timestamp | None = None
    completed_at: Timestamp | None = None
    test: TestFlag = False
