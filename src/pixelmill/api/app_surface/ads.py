"""``/api/tryon`` (JWT) marketing images: a platform ad, synchronously and free
(``generate-ai-ad``), and asset collections: six marketing images of an uploaded product on
the job machinery, 6 credits (``start-asset-collection``; poll
``GET /api/tryon/asset-collection/{collection_id}``)."""

from __future__ import annotations

import hashlib
from typing import Annotated

from fastapi import APIRouter, File, Form, Path, Request, UploadFile
from fastapi.responses import JSONResponse

from pixelmill.api.deps import BaseUrl, JwtUser, ReadSession, Res
from pixelmill.api.idempotent import idempotent_create
from pixelmill.marketing import service as marketing
from pixelmill.marketing.requests import AssetCollectionRequest
from pixelmill.marketing.schemas import (
    AdRequest,
    AdResult,
    AssetCategory,
    AssetCollectionCreated,
    AssetCollectionForm,
    AssetCollectionStatus,
)
from pixelmill.operations.inputs import ImageSource

router = APIRouter(prefix="/api/tryon", tags=["try-on"])


@router.post("/generate-ai-ad", response_model=AdResult)
async def generate_ai_ad(
    body: AdRequest, user: JwtUser, resources: Res, base_url: BaseUrl
) -> AdResult:
    """A ready-to-post ad (free): the product in ``image_url`` cut out and laid out with the
    headline, tagline, a button and an optional price badge at the platform's exact size, in
    one of five styles. Text is auto-sized and wrapped to fit, and every text block reaches
    WCAG 4.5:1 contrast against the pixels behind it (a panel is added when needed)."""
    params: dict[str, object] = {
        "platform": body.platform,
        "style": body.style,
        "headline": body.headline or "",
        "tagline": body.tagline or "",
    }
    if body.cta is not None:
        params["cta"] = body.cta
    if body.price is not None:
        params["price"] = body.price
    outcome = await resources.pipeline.run(
        "ad",
        ImageSource("url", body.image_url),
        params,
        user=user,
        surface="tryon",
        base_url=base_url,
        output_format="jpeg",
        quality=92,
    )
    image = outcome.images[0]
    details = dict(outcome.details)
    return AdResult(
        ad_url=image.url,
        platform=body.platform,
        width=int(str(details.get("width", 0))),
        height=int(str(details.get("height", 0))),
        credits_used=outcome.credits_used,
        details=details,
    )


@router.post(
    "/start-asset-collection", status_code=202, responses={202: {"model": AssetCollectionCreated}}
)
async def start_asset_collection(
    request: Request,
    user: JwtUser,
    resources: Res,
    base_url: BaseUrl,
    product_image: Annotated[UploadFile, File(description="the product photo")],
    category: Annotated[AssetCategory, Form()],
    product_description: Annotated[str | None, Form(max_length=2000)] = None,
    catalog_product_id: Annotated[int | None, Form(ge=1, le=2**31 - 1)] = None,
) -> JSONResponse:
    """Six marketing images of the product, made in the background: three scenes, a silo
    (the cut-out on white, marketplace style) and two ad layouts (Instagram square, Pinterest)
    headlined from ``product_description``. 6 credits (1 per image) reserved now; an image
    that cannot be made is not charged. Poll ``GET /api/tryon/asset-collection/{collection_id}``.
    Honours ``Idempotency-Key``."""
    data = await product_image.read()
    form = AssetCollectionForm(
        category=category,
        product_description=product_description,
        catalog_product_id=catalog_product_id,
        image_sha256=hashlib.sha256(data).hexdigest(),
    )
    create = AssetCollectionRequest(resources, user, base_url, form=form, data=data)
    return await idempotent_create(request, resources.db, user, form, 202, create)


@router.get("/asset-collection/{collection_id}", response_model=AssetCollectionStatus)
def get_asset_collection(
    collection_id: Annotated[int, Path(ge=1, le=2**31 - 1)],
    user: JwtUser,
    resources: Res,
    session: ReadSession,
    base_url: BaseUrl,
) -> AssetCollectionStatus:
    """The collection so far: each image as it is delivered (``type`` scene, silo or ad)."""
    return marketing.asset_collection_status(
        session, resources.signer, user.id, collection_id, base_url
    )
