"""The v1 multipart surface (API key): image operations with a base64 ``result``, the user, the
credits and the processing history."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, Form, UploadFile

from pixelmill.accounts.schemas import CreditBalance, UserInfo
from pixelmill.api.deps import ApiKeyUser, BaseUrl, ReadSession, Res
from pixelmill.api.forms import UpscaleFactor
from pixelmill.api.v2 import account
from pixelmill.credits import ledger
from pixelmill.engines.background import BackgroundRemovalParams
from pixelmill.imaging import OutputFormat
from pixelmill.operations.inputs import ImageSource
from pixelmill.operations.schemas import V1Result

router = APIRouter(prefix="/api/v1", tags=["v1"])


async def _run_v1(
    operation: str,
    file: UploadFile,
    params: dict[str, Any],
    user: ApiKeyUser,
    resources: Res,
    base_url: str,
    output_format: OutputFormat | None = None,
    *,
    quality: int = 95,
    extra_inputs: dict[str, ImageSource] | None = None,
) -> V1Result:
    data = await file.read()
    outcome = await resources.pipeline.run(
        operation,
        ImageSource("bytes", data),
        params,
        user=user,
        surface="v1",
        base_url=base_url,
        output_format=output_format,
        quality=quality,
        extra_inputs=extra_inputs,
        keep_primary_bytes=True,
    )
    return V1Result.from_outcome(outcome)


ImageFile = Annotated[
    UploadFile, File(description="JPEG, PNG or WebP; the part needs no content type")
]


@router.post("/remove-background")
async def remove_background(
    file: ImageFile,
    user: ApiKeyUser,
    resources: Res,
    base_url: BaseUrl,
    options: Annotated[BackgroundRemovalParams, Form()],
) -> V1Result:
    """Remove the background; ``result`` is a transparent PNG in base64 by default. The
    output controls of ``/api/v2/remove-background`` are form fields here. 1 credit."""
    extra = {}
    if options.bg_image_base64 or options.bg_image_url:
        extra["background"] = ImageSource.choose(options.bg_image_base64, options.bg_image_url)
    params = options.model_dump(exclude_unset=True)
    return await _run_v1(
        "background_removal",
        file,
        params,
        user,
        resources,
        base_url,
        quality=options.quality,
        extra_inputs=extra,
    )


@router.post("/remove-text")
async def remove_text(
    file: ImageFile,
    user: ApiKeyUser,
    resources: Res,
    base_url: BaseUrl,
    scope: Annotated[Literal["overlays", "all"], Form()] = "overlays",
) -> V1Result:
    """Remove text and watermarks laid over the photo (``scope=all``: the photo's own text,
    printed on a product or a sign, too). 1 credit."""
    return await _run_v1("text_removal", file, {"scope": scope}, user, resources, base_url)


@router.post("/upscale")
async def upscale(
    file: ImageFile,
    user: ApiKeyUser,
    resources: Res,
    base_url: BaseUrl,
    scale: Annotated[UpscaleFactor, Form()] = 2,
    quality: Annotated[Literal["fast", "balanced", "high"], Form()] = "balanced",
) -> V1Result:
    """Upscale 2x/4x (1 credit) or 8x (2 credits)."""
    return await _run_v1(
        "upscale", file, {"scale": scale, "quality": quality}, user, resources, base_url
    )


@router.post("/image-to-image")
async def image_to_image(
    file: ImageFile,
    user: ApiKeyUser,
    resources: Res,
    base_url: BaseUrl,
    prompt: Annotated[str, Form(min_length=1, max_length=2000)],
    strength: Annotated[float, Form(ge=0, le=1)] = 0.75,
) -> V1Result:
    """Prompt-driven transformation (0 subtle, 1 strong). 2 credits."""
    return await _run_v1(
        "image_to_image", file, {"prompt": prompt, "strength": strength}, user, resources, base_url
    )


@router.get("/user", response_model=UserInfo)
def user_info(user: ApiKeyUser, session: ReadSession) -> UserInfo:
    """The account that owns the API key, with its credits."""
    credits = ledger.balance(session, user.id)
    return UserInfo(id=user.id, email=user.email, credits=credits, is_active=user.is_active)


@router.get("/credits", response_model=CreditBalance)
def credits(user: ApiKeyUser, session: ReadSession) -> CreditBalance:
    """The account's credit balance."""
    totals = ledger.credit_totals(session, user.id)
    return CreditBalance(credits=totals.credits, total_purchased=totals.total_purchased)


# One handler serves both surfaces: the same body on v1 and v2 (api/v2/account.py).
router.get("/history")(account.history)
