"""Video, ad-pack and asset-collection jobs under integer ids (``jobs.number``): creates
(reserve the price from ``credits.pricing``, write the numbered job, dispatched after commit)
and the account-scoped polls. A video's price is captured when the MP4 is stored; an ad pack's
and a collection's output by output as each is delivered; the rest released at the end."""

from __future__ import annotations

from sqlalchemy.orm import Session

from pixelmill.credits.pricing import AD_PACK_PRICES
from pixelmill.db.models import Job
from pixelmill.engines.ads import PLATFORMS
from pixelmill.engines.product_text import count_words
from pixelmill.engines.speech import MAX_WORDS
from pixelmill.errors import InvalidInput
from pixelmill.jobs import lifecycle
from pixelmill.jobs import service as jobs
from pixelmill.jobs.failures import job_failures, partial_warning
from pixelmill.marketing.ad_kinds import (
    AD_PACK_KIND,
    ASSET_COLLECTION_KIND,
    PACK_AD_STYLES,
    AdPackJobParams,
    AssetCollectionJobParams,
)
from pixelmill.marketing.kinds import VideoJobParams
from pixelmill.marketing.schemas import (
    AdPackCreate,
    AdPackStatus,
    AssetCollectionStatus,
    CaptionOut,
    CollectionImage,
    ScrapedProduct,
    StaticAd,
    VideoJobCreated,
    VideoJobStatus,
)
from pixelmill.storage import UrlSigner

VIDEO_KIND = "video"
QUICK_VIDEO_MAX_WORDS = 150

_STATUS = {lifecycle.PENDING: "pending", lifecycle.QUEUED: "pending"}
_STEP = {
    lifecycle.PENDING: "queued",
    lifecycle.QUEUED: "queued",
    lifecycle.PROCESSING: "writing the script, speaking and rendering",
    lifecycle.COMPLETED: "done",
    lifecycle.FAILED: "failed",
}


def check_script(script: str, limit: int = MAX_WORDS) -> str:
    """The script with its whitespace normalised; ValueError when it has too many words."""
    text = " ".join(script.split())
    if count_words(text) > limit:
        raise ValueError(f"the script has more than {limit} words")
    return text


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
        test=job.test,
    )


def video_status(
    session: Session, signer: UrlSigner, user_id: int, number: int, base_url: str
) -> VideoJobStatus:
    """A video job of the account by its integer id (another account's: 404)."""
    job = jobs.get_numbered_job(session, user_id, number, kind=VIDEO_KIND)
    results = jobs.results_of(session, signer, job, base_url)
    params = VideoJobParams.model_validate(job.params or {})
    video = params.video
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
        script=video.get("script") or params.script or None,
        aspect=params.aspect,
        details=details,
        created_at=job.created_at,
        completed_at=job.completed_at,
        test=job.test,
    )


ANIMATIONS_WARNING = (
    "include_animations: animated ads are not produced by this server; the pack has none and "
    "nothing is charged for them"
)


def ad_pack_parts(body: AdPackCreate) -> dict[str, int]:
    """The parts the request includes and what each costs."""
    wanted = {
        "images": body.include_images,
        "ads": body.include_ads,
        "captions": body.include_captions,
        "video": body.include_video,
    }
    parts = {name: AD_PACK_PRICES[name] for name, on in wanted.items() if on}
    if not parts:
        raise InvalidInput(
            "Nothing to make: set at least one of include_images, include_ads, "
            "include_captions, include_video"
        )
    return parts


def _results(session: Session, signer: UrlSigner, job: Job, base_url: str) -> dict[str, str]:
    return {r.scene: r.url for r in jobs.results_of(session, signer, job, base_url)}


def _progress(job: Job) -> dict[str, int]:
    return {
        "completed": job.progress_completed,
        "failed": job.progress_failed,
        "total": job.images_to_generate,
    }


def ad_pack_status(
    session: Session, signer: UrlSigner, user_id: int, number: int, base_url: str
) -> AdPackStatus:
    """The body of ``GET /api/v2/ad-pack/{job_id}``: every part delivered so far."""
    job = jobs.get_numbered_job(session, user_id, number, kind=AD_PACK_KIND)
    params = AdPackJobParams.model_validate(job.params or {})
    urls = _results(session, signer, job, base_url)
    product = params.product
    ads = []
    for platform, style in PACK_AD_STYLES.items():
        url = urls.get(f"ad:{platform}")
        if url:
            spec = PLATFORMS[platform]
            ads.append(
                StaticAd(
                    platform=platform, url=url, width=spec.width, height=spec.height, style=style
                )
            )
    details = {"captions": "templated, no language model", "ads": "rule-based layouts"}
    return AdPackStatus(
        job_id=number,
        status=job.status,
        url=params.url,
        product=ScrapedProduct.model_validate(product) if product else None,
        product_images=[url for label, url in urls.items() if label.startswith("photo:")],
        ugc_video_url=urls.get("video"),
        static_ads=ads,
        captions=[CaptionOut.model_validate(c) for c in params.captions],
        credits_reserved=job.credits_reserved,
        credits_used=job.credits_used,
        parts=params.parts,
        progress=_progress(job),
        error=job.error,
        warnings=[*(params.warnings or []), *filter(None, [partial_warning(job)])] or None,
        failures=job_failures(job),
        details=details,
        created_at=job.created_at,
        started_at=job.started_at,
        completed_at=job.completed_at,
        test=job.test,
    )


def asset_collection_status(
    session: Session, signer: UrlSigner, user_id: int, number: int, base_url: str
) -> AssetCollectionStatus:
    """The body of ``GET /api/tryon/asset-collection/{collection_id}``."""
    job = jobs.get_numbered_job(session, user_id, number, kind=ASSET_COLLECTION_KIND)
    images = []
    for label, url in _results(session, signer, job, base_url).items():
        kind = "silo" if label == "silo" else "ad" if label.startswith("ad:") else "scene"
        images.append(CollectionImage(type=kind, label=label.removeprefix("scene:"), url=url))
    return AssetCollectionStatus(
        collection_id=number,
        status=job.status,
        category=AssetCollectionJobParams.model_validate(job.params or {}).category or job.category,
        credits_reserved=job.credits_reserved,
        credits_used=job.credits_used,
        progress=_progress(job),
        images=images,
        error=job.error,
        created_at=job.created_at,
        started_at=job.started_at,
        completed_at=job.completed_at,
    )
