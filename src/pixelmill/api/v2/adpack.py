"""``/api/v2/ad-pack``: a product page URL made into scene photos, static ads, captions and a
UGC video on the job machinery (202 with an integer ``job_id``; poll
``GET /api/v2/ad-pack/{job_id}``). 59 credits with the video, 9 without
(``pixelmill.marketing.service``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse

from pixelmill.api.deps import ApiKeyUser, BaseUrl, ReadSession, Res
from pixelmill.api.idempotent import idempotent_create
from pixelmill.marketing import service as marketing
from pixelmill.marketing.requests import AdPackRequest
from pixelmill.marketing.schemas import AdPackCreate, AdPackCreated, AdPackStatus

router = APIRouter(prefix="/api/v2", tags=["v2 generation"])

JobNumber = Annotated[int, Path(ge=1, le=2**31 - 1, description="the ad pack's job_id")]


@router.post("/ad-pack", status_code=202, responses={202: {"model": AdPackCreated}})
async def create_ad_pack(
    body: AdPackCreate, user: ApiKeyUser, resources: Res, request: Request, base_url: BaseUrl
) -> JSONResponse:
    """Read the product page at ``url`` (JSON-LD ``Product``, OpenGraph, ``<img>``; fetched
    through the SSRF guard) and make, per the ``include_*`` flags: 6 scene photos (6 credits),
    8 static ads, one per platform (2), captions per platform (1) and a UGC video (50). The
    credits are reserved now, each part is charged when it is delivered, the rest released
    when the job ends; a page that cannot be read or names no product fails the job with
    everything released. ``include_animations`` is not produced (reported in ``warnings``).
    Honours ``Idempotency-Key``."""
    create = AdPackRequest(resources, user, base_url, body=body)
    return await idempotent_create(request, resources.db, user, body, 202, create)


@router.get("/ad-pack/{job_id}", response_model=AdPackStatus)
def get_ad_pack(
    job_id: JobNumber, user: ApiKeyUser, resources: Res, session: ReadSession, base_url: BaseUrl
) -> AdPackStatus:
    """The ad pack so far: ``product`` once the page is read, then ``product_images``,
    ``static_ads``, ``captions`` and ``ugc_video_url`` as each is delivered."""
    return marketing.ad_pack_status(session, resources.signer, user.id, job_id, base_url)
