"""Ad packs and asset collections on the job machinery: prices, creates (reserve + numbered
job row, dispatched after commit) and the account-scoped polls.

Prices (credits):

- ad pack: scene photos 6 (1 per photo, 6 photos), static ads 2 (8 ads; the first ad of each
  set of four carries 1), captions 1, video 50. All parts: 59; without the video: 9. Each
  output's price is captured when it is delivered; what was not delivered is released when
  the job ends.
- asset collection: 6 (1 per image: 3 scenes, 1 silo, 2 ad layouts).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from pixelmill.advertising.kinds import (
    AD_PACK_KIND,
    ASSET_COLLECTION_KIND,
    COLLECTION_LABELS,
    PACK_AD_STYLES,
)
from pixelmill.advertising.schemas import (
    AdPackCreate,
    AdPackCreated,
    AdPackStatus,
    AssetCollectionCreated,
    AssetCollectionStatus,
    CaptionOut,
    CollectionImage,
    ProductOut,
    StaticAd,
)
from pixelmill.db.models import Job
from pixelmill.engines.ads import PLATFORMS
from pixelmill.errors import InvalidInput
from pixelmill.jobs import service as jobs
from pixelmill.jobs.service import JobBackends
from pixelmill.storage import UrlSigner

AD_PACK_PARTS: dict[str, int] = {"images": 6, "ads": 2, "captions": 1, "video": 50}
"""The price of each part of an ad pack."""
ASSET_COLLECTION_PRICE = 6

ANIMATIONS_WARNING = (
    "include_animations: animated ads are not produced by this server; the pack has none and "
    "nothing is charged for them"
)

_TO_SCENES = {"cosmetics": "beauty", "watches": "accessories", "toys": "other"}


def ad_pack_parts(body: AdPackCreate) -> dict[str, int]:
    """The parts the request includes and what each costs."""
    wanted = {
        "images": body.include_images,
        "ads": body.include_ads,
        "captions": body.include_captions,
        "video": body.include_video,
    }
    parts = {name: AD_PACK_PARTS[name] for name, on in wanted.items() if on}
    if not parts:
        raise InvalidInput(
            "Nothing to make: set at least one of include_images, include_ads, "
            "include_captions, include_video"
        )
    return parts


def _poll_url(base_url: str, path: str) -> str:
    return base_url.rstrip("/") + path


def create_ad_pack(
    session: Session,
    backends: JobBackends,
    body: AdPackCreate,
    parts: dict[str, int],
    *,
    user_id: int,
    base_url: str,
    webhook_url: str | None,
) -> AdPackCreated:
    """Reserve the parts' prices and write the ``pending`` numbered ``ad_pack`` job."""
    warnings = [ANIMATIONS_WARNING] if body.include_animations else None
    count = 1 + 6 * ("images" in parts) + 8 * ("ads" in parts) + ("captions" in parts)
    count += "video" in parts
    job, remaining = jobs.create_job(
        session,
        backends,
        user_id=user_id,
        kind=AD_PACK_KIND,
        count=count,
        price=sum(parts.values()),
        base_url=base_url,
        params={"url": body.url, "parts": parts, "warnings": warnings},
        webhook_url=webhook_url,
        numbered=True,
    )
    assert job.number is not None
    return AdPackCreated(
        job_id=job.number,
        status=job.status,
        poll_url=_poll_url(base_url, f"/api/v2/ad-pack/{job.number}"),
        credits_reserved=job.credits_reserved,
        credits_remaining=remaining,
        parts=parts,
        warnings=warnings,
    )


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
    params: dict[str, Any] = dict(job.params or {})
    urls = _results(session, signer, job, base_url)
    product = params.get("product")
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
        url=str(params.get("url", "")),
        product=ProductOut.model_validate(product) if product else None,
        product_images=[url for label, url in urls.items() if label.startswith("photo:")],
        ugc_video_url=urls.get("video"),
        static_ads=ads,
        captions=[CaptionOut.model_validate(c) for c in params.get("captions", [])],
        credits_reserved=job.credits_reserved,
        credits_used=job.credits_used,
        parts=dict(params.get("parts", {})),
        progress=_progress(job),
        error=job.error,
        warnings=params.get("warnings"),
        details=details,
        created_at=job.created_at,
        started_at=job.started_at,
        completed_at=job.completed_at,
    )


def scenes_category(category: str) -> str:
    """The spec's asset-collection category in the scenes catalogue's vocabulary."""
    return _TO_SCENES.get(category, category)


def create_asset_collection(
    session: Session,
    backends: JobBackends,
    *,
    user_id: int,
    input_key: str,
    category: str,
    description: str | None,
    catalog_product_id: int | None,
    base_url: str,
) -> AssetCollectionCreated:
    """Reserve 6 credits and write the ``pending`` numbered ``asset_collection`` job."""
    job, remaining = jobs.create_job(
        session,
        backends,
        user_id=user_id,
        kind=ASSET_COLLECTION_KIND,
        count=len(COLLECTION_LABELS),
        price=ASSET_COLLECTION_PRICE,
        base_url=base_url,
        input_key=input_key,
        category=scenes_category(category),
        params={
            "description": description,
            "catalog_product_id": catalog_product_id,
            "category": category,
        },
        numbered=True,
    )
    assert job.number is not None
    return AssetCollectionCreated(
        collection_id=job.number,
        status=job.status,
        credits_reserved=job.credits_reserved,
        credits_remaining=remaining,
        poll_url=_poll_url(base_url, f"/api/tryon/asset-collection/{job.number}"),
        images=list(COLLECTION_LABELS),
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
        category=str((job.params or {}).get("category", job.category)),
        credits_reserved=job.credits_reserved,
        credits_used=job.credits_used,
        progress=_progress(job),
        images=images,
        error=job.error,
        created_at=job.created_at,
        started_at=job.started_at,
        completed_at=job.completed_at,
    )
