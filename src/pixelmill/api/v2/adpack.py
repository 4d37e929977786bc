"""``/api/v2/ad-pack``: a product page URL made into scene photos, static ads, captions and a
UGC video on the job machinery (202 with an integer ``job_id``; poll
``GET /api/v2/ad-pack/{job_id}``). 59 credits with the video, 9 without
(``pixelmill.marketing.service``)."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse
from sqlalchemy.orm import Session

from pixelmill.api.deps import ApiKeyUser, Res
from pixelmill.api.idempotent import Closures, idempotent_create
from pixelmill.api.rendering import public_base_url
from pixelmill.imaging import ImageInputError, check_url_allowed
from pixelmill.marketing import service as marketing
from pixelmill.marketing.pages import page_policy
from pixelmill.marketing.schemas import AdPackCreate, AdPackCreated, AdPackStatus
from pixelmill.operations.inputs import image_error
from pixelmill.webhooks.registry import checked_webhook_url

router = APIRouter(prefix="/api/v2", tags=["v2 generation"])

JobNumber = Annotated[int, Path(ge=1, le=2**31 - 1, description="the ad pack's job_id")]


def _check_page_url(url: str, allow_loopback: bool) -> None:
    """Refuse a page address exactly as an image URL is refused (same codes, same messages)."""
    try:
        check_url_allowed(url, page_policy(allow_loopback))
    except ImageInputError as exc:
        raise image_error(exc) from exc


@router.post("/ad-pack", status_code=202, responses={202: {"model": AdPackCreated}})
async def create_ad_pack(
    body: AdPackCreate, user: ApiKeyUser, resources: Res, request: Request
) -> JSONResponse:
    """Read the product page at ``url`` (JSON-LD ``Product``, OpenGraph, ``<img>``; fetched
    through the SSRF guard) and make, per the ``include_*`` flags: 6 scene photos (6 credits),
    8 static ads, one per platform (2), captions per platform (1) and a UGC video (50). The
    credits are reserved now, each part is charged when it is delivered, the rest released
    when the job ends; a page that cannot be read or names no product fails the job with
    everything released. ``include_animations`` is not produced (reported in ``warnings``).
    Honours ``Idempotency-Key``."""
    parts = marketing.ad_pack_parts(body)
    base_url = public_base_url(request, resources)

    async def prepare() -> str | None:
        webhook_url = await checked_webhook_url(body.webhook_url, resources.settings)
        await asyncio.to_thread(_check_page_url, body.url, resources.settings.allow_loopback_urls)
        return webhook_url

    def create(session: Session, webhook_url: str | None) -> AdPackCreated:
        return marketing.create_ad_pack(
            session,
            resources.jobs,
            body,
            parts,
            user_id=user.id,
            base_url=base_url,
            webhook_url=webhook_url,
        )

    return await idempotent_create(
        request, resources.db, user, body, 202, Closures(prepare, create)
    )


@router.get("/ad-pack/{job_id}", response_model=AdPackStatus)
def get_ad_pack(
    job_id: JobNumber, user: ApiKeyUser, resources: Res, request: Request
) -> AdPackStatus:
    """The ad pack so far: ``product`` once the page is read, then ``product_images``,
    ``static_ads``, ``captions`` and ``ugc_video_url`` as each is delivered."""
    with resources.db.read() as session:
        return marketing.ad_pack_status(
            session, resources.signer, user.id, job_id, public_base_url(request, resources)
        )
