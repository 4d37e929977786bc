"""Marketing's job requests (:class:`pixelmill.jobs.requests.JobRequest`), one per create
endpoint: talking videos (v2 and the try-on surface), ad packs and asset collections."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from pixelmill.categories import from_spec
from pixelmill.credits.pricing import ASSET_COLLECTION_PRICE, OPERATION_PRICES
from pixelmill.db.models import Job
from pixelmill.engines.speech import MAX_WORDS
from pixelmill.errors import InvalidInput
from pixelmill.imaging import ImageInputError, check_url_allowed
from pixelmill.jobs.requests import JobRequestBase
from pixelmill.marketing import service as marketing
from pixelmill.marketing.ad_kinds import (
    AD_PACK_KIND,
    ASSET_COLLECTION_KIND,
    COLLECTION_LABELS,
    AdPackJobParams,
    AssetCollectionJobParams,
)
from pixelmill.marketing.kinds import VideoJobParams
from pixelmill.marketing.pages import page_policy
from pixelmill.marketing.schemas import (
    AdPackCreate,
    AdPackCreated,
    AssetCollectionCreated,
    AssetCollectionForm,
    TryOnVideoCreated,
    TryOnVideoForm,
    VideoCreate,
    VideoJobCreated,
)
from pixelmill.marketing.service import VIDEO_KIND
from pixelmill.operations.inputs import ImageSource, image_error


def checked_script(script: str, limit: int = MAX_WORDS) -> str:
    """:func:`marketing.check_script`, its refusal a 422."""
    try:
        return marketing.check_script(script, limit)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from exc


@dataclass
class _InputRequest(JobRequestBase):
    """A request whose ``prepare`` stores one input image (removed again on a refusal)."""

    input_key: str = field(default="", init=False)

    async def _store(self, source: ImageSource) -> None:
        self.input_key = (await self._save(source, "inputs")).key

    def discard(self) -> None:
        self._delete(self.input_key)

    def _video_job(self, session: Session, params: VideoJobParams) -> tuple[Job, int]:
        """Reserve the video's price and write the ``pending`` numbered ``video`` job."""
        price = OPERATION_PRICES[VIDEO_KIND]
        return self._create_job(
            session, VIDEO_KIND, 1, price, input_key=self.input_key, params=params, numbered=True
        )


@dataclass
class VideoRequest(_InputRequest):
    """``POST /api/v2/generate/video``: a talking video job from one still image."""

    body: VideoCreate = field(kw_only=True)
    script: str = field(default="", init=False)

    def __post_init__(self) -> None:
        self.script = checked_script(self.body.script)

    async def prepare(self) -> None:
        await self._check_webhook(self.body.webhook_url)
        await self._store(ImageSource.choose(self.body.image_base64, self.body.image_url))

    def create(self, session: Session) -> VideoJobCreated:
        b = self.body
        aspect = b.aspect_ratio or b.aspect
        params = VideoJobParams(
            script=self.script,
            duration=b.duration,
            aspect=aspect,
            tone=b.tone,
            subtitles=b.subtitles,
            product_name=b.product_name,
        )
        return marketing.created(*self._video_job(session, params), self.base_url)


@dataclass
class TryOnVideoRequest(_InputRequest):
    """``POST /api/tryon/create-video``: the same job, in the try-on surface's shape."""

    form: TryOnVideoForm = field(kw_only=True)

    async def prepare(self) -> None:
        await self._store(ImageSource("url", self.form.image_url))

    def create(self, session: Session) -> TryOnVideoCreated:
        f = self.form
        params = VideoJobParams(
            script=f.script,
            duration=f.duration,
            tone=f.tone,
            subtitles=f.enable_subtitles,
            surface="tryon",
        )
        job, remaining = self._video_job(session, params)
        assert job.number is not None
        message = "video job created"
        if f.prompt.strip():
            message += "; prompt not used (the offline renderer animates the image as it is)"
        return TryOnVideoCreated(
            job_id=job.number,
            status="pending",
            credits_used=job.credits_reserved,
            credits_reserved=job.credits_reserved,
            credits_remaining=remaining,
            message=message,
            poll_url=marketing.poll_url(self.base_url, job, surface="tryon"),
            test=job.test,
        )


def _check_page_url(url: str, allow_loopback: bool) -> None:
    """Refuse a page address exactly as an image URL is refused (same codes, same messages)."""
    try:
        check_url_allowed(url, page_policy(allow_loopback))
    except ImageInputError as exc:
        raise image_error(exc) from exc


@dataclass
class AdPackRequest(JobRequestBase):
    """``POST /api/v2/ad-pack``: the page address checked now, read by the job; the parts'
    prices reserved and the ``pending`` numbered ``ad_pack`` job written."""

    body: AdPackCreate = field(kw_only=True)
    parts: dict[str, int] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.parts = marketing.ad_pack_parts(self.body)

    async def prepare(self) -> None:
        await self._check_webhook(self.body.webhook_url)
        allow_loopback = self.backends.settings.allow_loopback_urls
        await asyncio.to_thread(_check_page_url, self.body.url, allow_loopback)

    def create(self, session: Session) -> AdPackCreated:
        body, parts = self.body, self.parts
        warnings = [marketing.ANIMATIONS_WARNING] if body.include_animations else None
        count = 1 + 6 * ("images" in parts) + 8 * ("ads" in parts) + ("captions" in parts)
        count += "video" in parts
        params = AdPackJobParams(url=body.url, parts=parts, warnings=warnings)
        price = sum(parts.values())
        job, remaining = self._create_job(
            session, AD_PACK_KIND, count, price, params=params, numbered=True
        )
        assert job.number is not None
        return AdPackCreated(
            job_id=job.number,
            status=job.status,
            poll_url=self.base_url.rstrip("/") + f"/api/v2/ad-pack/{job.number}",
            credits_reserved=job.credits_reserved,
            credits_remaining=remaining,
            parts=parts,
            warnings=warnings,
            test=job.test,
        )


@dataclass
class AssetCollectionRequest(_InputRequest):
    """``POST /api/tryon/start-asset-collection``: the uploaded product photo stored, then
    ``ASSET_COLLECTION_PRICE`` reserved and the ``pending`` numbered ``asset_collection`` job
    written."""

    form: AssetCollectionForm = field(kw_only=True)
    data: bytes = field(kw_only=True, repr=False)

    async def prepare(self) -> None:
        await self._store(ImageSource("bytes", self.data))

    def create(self, session: Session) -> AssetCollectionCreated:
        f = self.form
        job, remaining = self._create_job(
            session,
            ASSET_COLLECTION_KIND,
            len(COLLECTION_LABELS),
            ASSET_COLLECTION_PRICE,
            input_key=self.input_key,
            category=from_spec(f.category),
            params=AssetCollectionJobParams(
                description=f.product_description,
                catalog_product_id=f.catalog_product_id,
                category=f.category,
            ),
            numbered=True,
        )
        assert job.number is not None
        return AssetCollectionCreated(
            collection_id=job.number,
            status=job.status,
            credits_reserved=job.credits_reserved,
            credits_remaining=remaining,
            poll_url=self.base_url.rstrip("/") + f"/api/tryon/asset-collection/{job.number}",
            images=list(COLLECTION_LABELS),
            test=job.test,
        )
