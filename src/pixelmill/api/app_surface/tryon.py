"""``/api/tryon`` (JWT): classify a product photo (free) and try a garment on a model,
synchronously (``generate``: 1 credit per image, its own 30 requests/minute bucket).

The model is a public gallery model (``model_type=public``, ``model_id`` from
``GET /api/v2/avatars/public``), one of the account's avatars (``user`` or ``saved``: its
UUID), or any photo of a person (``model_image_url``, which then wins)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Literal

from fastapi import APIRouter, File, Form, Request, UploadFile
from pydantic import BaseModel, Field

from pixelmill.api.deps import BaseUrl, JwtUser, Res, publish_limits
from pixelmill.categories import SPEC_CATEGORIES, Category, from_spec, to_spec
from pixelmill.engines.analyze import analyze_image, guess_product_category
from pixelmill.engines.avatar import gallery_model
from pixelmill.errors import NotFound
from pixelmill.generation.people import gallery_model_person
from pixelmill.generation.service import Model
from pixelmill.library import service as library
from pixelmill.operations.inputs import ImageSource

router = APIRouter(prefix="/api/tryon", tags=["try-on"])


class ProductClassification(BaseModel):
    category: str = Field(description=", ".join(SPEC_CATEGORIES))
    confidence: float = Field(ge=0, le=1)
    description: str
    method: str = Field(description="what the guess rests on")


class TryOnImage(BaseModel):
    url: str
    model: str = Field(description="the model it was made with")


class TryOnResult(BaseModel):
    success: bool = True
    result_url: str
    result_urls: list[str]
    results: list[TryOnImage]
    credits_used: int
    credits_remaining: int | None
    details: dict[str, object]


@router.post("/classify-product", response_model=ProductClassification)
async def classify_product(
    user: JwtUser,
    resources: Res,
    product_image: Annotated[UploadFile, File(description="the product photo")],
    source_filename: Annotated[str | None, Form()] = None,
) -> ProductClassification:
    """Guess a product's category from its photo (free). Offline, the only honest cues are
    words printed on the product (OCR) and whether a person wears it; without either the
    answer is ``other`` with a low confidence."""
    data = await product_image.read()
    analysis = await resources.pipeline.run_free(
        analyze_image, load=(ImageSource("bytes", data), user)
    )
    guessed = guess_product_category(analysis)
    words = " ".join(analysis.get("text_detected", []))
    if guessed == "other":
        confidence, method = 0.2, "no printed keyword and no person: unknown"
    elif words and guessed != Category.CLOTHING:
        confidence, method = 0.7, f"keywords read on the product: {words[:80]}"
    else:
        confidence, method = 0.5, "a person wears or holds it"
    return ProductClassification(
        category=to_spec(guessed),
        confidence=confidence,
        description=str(analysis.get("description") or ""),
        method=method,
    )


async def _model(resources: Res, user: JwtUser, model_id: str, model_type: str) -> Model:
    if model_type == "public":
        public = gallery_model(model_id)
        if public is None:
            raise NotFound("Public model not found (see GET /api/v2/avatars/public)")
        return await gallery_model_person(resources, public)
    with resources.db.read() as session:
        return Model.of(library.get_avatar(session, user.id, model_id))


@router.post("/generate", response_model=TryOnResult)
async def generate(
    request: Request,
    user: JwtUser,
    resources: Res,
    base_url: BaseUrl,
    product_image: Annotated[UploadFile, File(description="the garment, photographed flat")],
    model_id: Annotated[str, Form(description="a public model id or one of your avatar UUIDs")],
    model_type: Annotated[Literal["public", "user", "saved"], Form()],
    prompt: Annotated[str, Form(max_length=2000)] = "",
    num_outputs: Annotated[int, Form(ge=1, le=4)] = 1,
    model_image_url: Annotated[str | None, Form(description="a person photo instead")] = None,
    product_category: Annotated[str | None, Form(description="default: clothing")] = None,
    product_description: Annotated[str | None, Form()] = None,
    pose_key: Annotated[str | None, Form(description="not used: poses come from the model")] = None,
    catalog_product_id: Annotated[int | None, Form(ge=1, le=2**31 - 1)] = None,
) -> TryOnResult:
    """The garment on the model, ``num_outputs`` variants, 1 credit each (a non-clothing
    ``product_category`` is a 422, nothing charged)."""
    state = resources.limiter.hit_endpoint(user.id, "tryon_generate")
    if state is not None:
        publish_limits(request, state)
    category = (product_category or Category.CLOTHING).strip().lower()
    params: dict[str, object] = {
        "num_outputs": num_outputs,
        "prompt": prompt or None,
        "category": from_spec(category),
    }
    if model_image_url:
        source = ImageSource("url", model_image_url)
    else:
        model = await _model(resources, user, model_id, model_type)
        stored = await asyncio.to_thread(resources.library_storage.get, model.image_key)
        if stored is None:
            raise NotFound("The model's image is missing")
        source = ImageSource("bytes", stored.data)
        params["landmarks"] = model.landmarks
    product = ImageSource("bytes", await product_image.read())
    outcome = await resources.pipeline.run(
        "tryon",
        source,
        params,
        user=user,
        surface="tryon",
        base_url=base_url,
        output_format="jpeg",
        quality=90,
        extra_inputs={"product": product},
    )
    urls = [image.url for image in outcome.images]
    unused = {"product_description": product_description, "pose_key": pose_key}
    details = dict(outcome.details)
    if any(unused.values()):
        details["unused_fields"] = [name for name, value in unused.items() if value]
    return TryOnResult(
        result_url=urls[0],
        result_urls=urls,
        results=[TryOnImage(url=url, model=model_id) for url in urls],
        credits_used=outcome.credits_used,
        credits_remaining=outcome.credits_remaining,
        details=details,
    )
