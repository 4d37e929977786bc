"""``/api/tryon`` (JWT): classify a product photo (free) and try a garment on a model,
synchronously (``generate``: 1 credit per image, its own 30 requests/minute bucket).

The model is a public gallery model (``model_type=public``, ``model_id`` from
``GET /api/v2/avatars/public``), one of the account's avatars (``user`` or ``saved``: its
UUID), or any photo of a person (``model_image_url``, which then wins)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, File, Form, Request, UploadFile
from pydantic import BaseModel, Field

from pixelmill.api.deps import BaseUrl, JwtUser, Res, count_endpoint
from pixelmill.categories import SPEC_CATEGORIES, to_spec
from pixelmill.engines.analyze import analyze_image
from pixelmill.engines.analyze.category import CategoryGuess, named
from pixelmill.generation import people
from pixelmill.operations.inputs import ImageSource
from pixelmill.operations.results import Outcome

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

    @classmethod
    def of(cls, outcome: Outcome, model_id: str, unused: dict[str, str | None]) -> TryOnResult:
        """The run's images, all made with ``model_id``; the given form fields the try-on
        does not use are listed in ``details.unused_fields``."""
        urls = [image.url for image in outcome.images]
        details = dict(outcome.details)
        if any(unused.values()):
            details["unused_fields"] = [name for name, value in unused.items() if value]
        return cls(
            result_url=urls[0],
            result_urls=urls,
            results=[TryOnImage(url=url, model=model_id) for url in urls],
            credits_used=outcome.credits_used,
            credits_remaining=outcome.credits_remaining,
            details=details,
        )


@router.post("/classify-product", response_model=ProductClassification)
async def classify_product(
    user: JwtUser,
    resources: Res,
    product_image: Annotated[UploadFile, File(description="the product photo")],
    source_filename: Annotated[str | None, Form()] = None,
) -> ProductClassification:
    """Guess a product's category from its photo (free): words printed on it, a person in
    it, its outline on a plain backdrop, and the file name as a weak hint; ``method`` names the
    cue and ``confidence`` how far it goes (docs/engines.md, "Product categories")."""
    data = await product_image.read()
    analysis = await resources.pipeline.run_free(
        analyze_image, load=(ImageSource("bytes", data), user)
    )
    guessed = named(CategoryGuess.of(analysis["product_category"]), source_filename)
    return ProductClassification(
        category=to_spec(guessed.category),
        confidence=guessed.confidence,
        description=str(analysis.get("description") or ""),
        method=guessed.method,
    )


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
    count_endpoint(request, resources, user, "tryon_generate")
    outcome = await people.try_on(
        resources,
        user,
        base_url,
        product=await product_image.read(),
        model_id=model_id,
        model_type=model_type,
        model_image_url=model_image_url,
        category=product_category,
        prompt=prompt,
        num_outputs=num_outputs,
    )
    unused = {"product_description": product_description, "pose_key": pose_key}
    return TryOnResult.of(outcome, model_id, unused)
