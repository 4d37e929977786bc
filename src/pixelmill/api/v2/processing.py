"""The v2 synchronous processing endpoints (JSON in, JSON out, API key).

Every endpoint takes ``image_url`` or ``image_base64`` (plain base64; a ``data:`` URI is accepted
too). When both are given, ``image_base64`` is used. Each endpoint is one catalog operation; the
request models below only add that operation's own fields."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from pixelmill.api.deps import ApiKeyUser, Res
from pixelmill.api.rendering import public_base_url, v2_body
from pixelmill.operations.pipeline import ImageSource

router = APIRouter(prefix="/api/v2", tags=["v2 processing"])

STYLES = Literal[
    "cinematic", "anime", "oil_painting", "watercolor", "sketch", "pop_art", "cyberpunk", "vintage"
]


class ImageInput(BaseModel):
    image_url: str | None = Field(None, description="public http(s) URL of a JPEG, PNG or WebP")
    image_base64: str | None = Field(
        None,
        description="the image as standard base64 (a data: URI is accepted); wins over image_url",
    )


class RemoveBackgroundRequest(ImageInput):
    output_format: Literal["png", "webp"] = "png"
    crop_to_object: bool = Field(False, description="crop to the subject's bounding box")


class MakeTransparentRequest(ImageInput):
    output_format: Literal["png", "webp"] = "png"
    method: Literal["auto", "color_key", "salient"] = Field(
        "auto",
        description="auto: colour key when the border is one plain colour, else the subject mask",
    )


class UpscaleRequest(ImageInput):
    scale: Literal[2, 4, 8] = 2
    quality: Literal["fast", "balanced", "high"] = "balanced"
    face_enhance: bool = False


class ConvertRequest(ImageInput):
    format: Literal["png", "jpg", "jpeg", "webp"] = Field("png", description="target format")
    quality: int = Field(90, ge=1, le=100)


class ColorizeRequest(ImageInput):
    reference_image_url: str | None = Field(None, description="a colour photo to take colours from")
    reference_image_base64: str | None = None
    palette: list[str] | None = Field(None, description="hex colours, dark to light")


class StyleTransferRequest(ImageInput):
    style: STYLES
    strength: float = Field(1.0, ge=0, le=1)


class PromptEditRequest(ImageInput):
    prompt: str = Field(min_length=1, max_length=2000)
    strength: float = Field(0.75, ge=0, le=1, description="0 subtle, 1 strong")


class ReplaceBackgroundRequest(ImageInput):
    prompt: str = Field(min_length=1, max_length=2000, description="the new background")
    seed: int = 0


class V2Result(BaseModel):
    status: str
    processing_id: str
    result_url: str | None
    credits_used: int
    credits_remaining: int | None
    processing_time: float
    details: dict[str, Any]


_IMAGE_FIELDS = {"image_url", "image_base64", "reference_image_url", "reference_image_base64"}


async def _run(
    operation: str,
    body: ImageInput,
    user: ApiKeyUser,
    resources: Res,
    request: Request,
    *,
    params: dict[str, Any] | None = None,
    output_format: Literal["png", "jpeg", "webp"] | None = None,
    extra_inputs: dict[str, ImageSource] | None = None,
) -> dict[str, Any]:
    outcome = await resources.pipeline.run(
        operation,
        ImageSource.choose(body.image_base64, body.image_url),
        params if params is not None else body.model_dump(exclude=_IMAGE_FIELDS),
        user=user,
        surface="v2",
        base_url=public_base_url(request, resources),
        output_format=output_format,
        extra_inputs=extra_inputs,
    )
    return v2_body(outcome)


@router.post("/remove-background", response_model=V2Result)
async def remove_background(
    body: RemoveBackgroundRequest, user: ApiKeyUser, resources: Res, request: Request
) -> dict[str, Any]:
    """Cut out the subject; a PNG (or WebP) with a transparent background. 1 credit."""
    return await _run(
        "background_removal",
        body,
        user,
        resources,
        request,
        params={},
        output_format=body.output_format,
    )


@router.post("/make-transparent", response_model=V2Result)
async def make_transparent(
    body: RemoveBackgroundRequest, user: ApiKeyUser, resources: Res, request: Request
) -> dict[str, Any]:
    """Make the background transparent (colour key on plain backgrounds, else the subject
    mask); PNG with alpha. 1 credit."""
    return await _run(
        "make_transparent",
        body,
        user,
        resources,
        request,
        params={},
        output_format=body.output_format,
    )


@router.post("/upscale", response_model=V2Result)
async def upscale(
    body: UpscaleRequest, user: ApiKeyUser, resources: Res, request: Request
) -> dict[str, Any]:
    """Upscale 2x, 4x (1 credit) or 8x (2 credits); exactly scale × the input size."""
    return await _run("upscale", body, user, resources, request)


@router.post("/remove-text", response_model=V2Result)
async def remove_text(
    body: ImageInput, user: ApiKeyUser, resources: Res, request: Request
) -> dict[str, Any]:
    """Remove text and watermarks (OCR text detection, stroke mask, inpainting). 1 credit."""
    return await _run("text_removal", body, user, resources, request)


@router.post("/convert", response_model=V2Result)
async def convert(
    body: ConvertRequest, user: ApiKeyUser, resources: Res, request: Request
) -> dict[str, Any]:
    """Convert to PNG, JPG or WebP (alpha flattened onto white for JPG). 1 credit."""
    fmt: Literal["png", "jpeg", "webp"] = "jpeg" if body.format in ("jpg", "jpeg") else body.format  # type: ignore[assignment]
    outcome = await resources.pipeline.run(
        "convert",
        ImageSource.choose(body.image_base64, body.image_url),
        {"format": body.format, "quality": body.quality},
        user=user,
        surface="v2",
        base_url=public_base_url(request, resources),
        output_format=fmt,
        quality=body.quality,
    )
    return v2_body(outcome)
