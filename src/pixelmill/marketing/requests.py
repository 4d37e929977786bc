"""Marketing's job requests (:class:`pixelmill.jobs.requests.JobRequest`), one per create
endpoint: talking videos (v2 and the try-on surface), ad packs and asset collections."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from pixelmill.errors import InvalidInput
from pixelmill.imaging import ImageInputError, check_url_allowed
from pixelmill.jobs.requests import JobRequestBase
from pixelmill.marketing import service as marketing
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
from pixelmill.marketing.video import MAX_SCRIPT_WORDS
from pixelmill.operations.inputs import ImageSource, image_error


def checked_script(script: str, limit: int = MAX_SCRIPT_WORDS) -> str:
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
        body = self.body
        job, remaining = marketing.create_video_job(
            session,
            self.backends.jobs,
            user_id=self.user.id,
            input_key=self.input_key,
            script=self.script,
            duration=body.duration,
            aspect=body.aspect_ratio or body.aspect,
            tone=body.tone,
            subtitles=body.subtitles,
            base_url=self.base_url,
            product_name=body.product_name,
            webhook_url=self.webhook_url,
        )
        return marketing.created(job, remaining, self.base_url)


@dataclass
class TryOnVideoRequest(_InputRequest):
    """``POST /api/tryon/create-video``: the same job, in the try-on surface's shape."""

    form: TryOnVideoForm = field(kw_only=True)

    async def prepare(self) -> None:
        await self._store(ImageSource("url", self.form.image_url))

    def create(self, session: Session) -> TryOnVideoCreated:
        form = self.form
        job, _ = marketing.create_video_job(
            session,
            self.backends.jobs,
            user_id=self.user.id,
            input_key=self.input_key,
            script=form.script,
            duration=form.duration,
            aspect="9:16",
            tone=form.tone,
            subtitles=form.enable_subtitles,
            base_url=self.base_url,
            surface="tryon",
        )
        assert job.number is not None
        message = "video job created"
        if form.prompt.strip():
            message += "; prompt not used (the offline renderer animates the image as it is)"
        return TryOnVideoCreated(
            job_id=job.number,
            status="pending",
            credits_used=job.credits_reserved,
            credits_reserved=job.credits_reserved,
            message=message,
            poll_url=marketing.poll_url(self.base_url, job, surface="tryon"),
        )


def _check_page_url(url: str, allow_loopback: bool) -> None:
    """Refuse a page address exactly as an image URL is refused (same codes, same messages)."""
    try:
        check_url_allowed(url, page_policy(allow_loopback))
    except ImageInputError as exc:
        raise image_error(exc) from exc


@dataclass
class AdPackRequest(JobRequestBase):
    """``POST /api/v2/ad-pack``: the page address checked now, read by the job."""

    body: AdPackCreate = field(kw_only=True)
    parts: dict[str, int] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.parts = marketing.ad_pack_parts(self.body)

    async def prepare(self) -> None:
        await self._check_webhook(self.body.webhook_url)
        allow_loopback = self.backends.settings.allow_loopback_urls
        await asyncio.to_thread(_check_page_url, self.body.url, allow_loopback)

    def create(self, session: Session) -> AdPackCreated:
        return marketing.create_ad_pack(
            session,
            self.backends.jobs,
            self.body,
            self.parts,
            user_id=self.user.id,
            base_url=self.base_url,
            webhook_url=self.webhook_url,
        )


@dataclass
class AssetCollectionRequest(_InputRequest):
    """``POST /api/tryon/start-asset-collection``: the uploaded product photo stored, then
    the collection's job."""

    form: AssetCollectionForm = field(kw_only=True)
    data: bytes = field(kw_only=True, repr=False)

    async def prepare(self) -> None:
        await self._store(ImageSource("bytes", self.data))

    def create(self, session: Session) -> AssetCollectionCreated:
        return marketing.create_asset_collection(
            session,
            self.backends.jobs,
            user_id=self.user.id,
            input_key=self.input_key,
            category=self.form.category,
            description=self.form.product_description,
            catalog_product_id=self.form.catalog_product_id,
            base_url=self.base_url,
        )
