"""``POST /api/process``: the unversioned multipart endpoint.

``processing_type`` selects the operation. Failures use this surface's own body
(``success: false``, ``error``, ``error_code``, ``details``; rendered in ``pixelmill.app``).
The per-endpoint rates of the spec (background removal 100/min, upscale 50, text removal 75,
image-to-image 15) apply here on top of the plan's limits."""

from __future__ import annotations

import base64
import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, Form, Request, UploadFile

from pixelmill.api.deps import ApiKeyUser, Res, publish_limits
from pixelmill.api.rendering import public_base_url
from pixelmill.errors import AppError, InvalidInput
from pixelmill.imaging import content_type
from pixelmill.operations.pipeline import ImageSource

router = APIRouter(tags=["process"])

PROCESSING_TYPES = ("background_removal", "upscale", "text_removal", "image_to_image")


@router.post("/api/process")
async def process(
    user: ApiKeyUser,
    resources: Res,
    request: Request,
    processing_type: Annotated[str, Form(description=", ".join(PROCESSING_TYPES))],
    image: Annotated[UploadFile | None, File(description="the input image")] = None,
    file: Annotated[UploadFile | None, File(description="image_to_image's input image")] = None,
    output_format: Annotated[Literal["png", "webp"] | None, Form()] = None,
    quality: Annotated[int, Form(ge=1, le=100)] = 95,
    scale: Annotated[Literal[2, 4, 8], Form()] = 2,
    face_enhance: Annotated[bool, Form()] = False,
    parameters: Annotated[
        str | None, Form(description='image_to_image: JSON {"prompt": ..., "strength": 0..1}')
    ] = None,
) -> dict[str, Any]:
    """Process one image. Background removal 1 credit, upscale 1 (8x: 2), text removal 1,
    image-to-image 2."""
    if processing_type not in PROCESSING_TYPES:
        raise AppError(
            f"Unknown processing_type {processing_type!r}",
            status_code=422,
            code="INVALID_PROCESSING_TYPE",
            details="Supported processing types: " + ", ".join(PROCESSING_TYPES),
        )
    state = resources.limiter.hit_endpoint(user.id, processing_type)
    if state is not None:
        publish_limits(request, state)

    upload = image or file
    if upload is None:
        raise AppError(
            "No image uploaded: send the image in the 'image' (or 'file') field",
            status_code=422,
            code="MISSING_IMAGE",
        )
    source = ImageSource("bytes", await upload.read())
    base = public_base_url(request, resources)

    if processing_type == "image_to_image":
        try:
            params = json.loads(parameters or "{}")
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"parameters is not valid JSON: {exc.msg}") from exc
        if not isinstance(params, dict) or not params.get("prompt"):
            raise InvalidInput('parameters must be a JSON object with a "prompt"')
        outcome = await resources.pipeline.run(
            "image_to_image",
            source,
            {"prompt": params["prompt"], "strength": params.get("strength", 0.75)},
            user=user,
            surface="process",
            base_url=base,
            keep_primary_bytes=True,
        )
        primary = outcome.primary
        assert primary is not None
        assert outcome.primary_bytes is not None
        data_uri = (
            f"data:{content_type(primary.format)};base64,"
            + base64.b64encode(outcome.primary_bytes).decode()
        )
        return {
            "processing_id": outcome.processing_id,
            "status": "completed",
            "processing_type": processing_type,
            "result_image_url": data_uri,
            "result_url": primary.url,
            "processing_time": outcome.processing_time,
            "credits_used": outcome.credits_used,
            "credits_remaining": outcome.credits_remaining,
            "details": outcome.details,
        }

    operation = processing_type
    params_map: dict[str, Any] = {}
    fmt: Literal["png", "webp"] | None = None
    if processing_type == "background_removal":
        fmt = output_format or "png"
    elif processing_type == "upscale":
        params_map = {"scale": scale, "quality": "balanced", "face_enhance": face_enhance}
    outcome = await resources.pipeline.run(
        operation,
        source,
        params_map,
        user=user,
        surface="process",
        base_url=base,
        output_format=fmt,
        quality=quality,
    )
    primary = outcome.primary
    assert primary is not None
    return {
        "success": True,
        "processing_id": outcome.processing_id,
        "result_url": primary.url,
        "credits_used": outcome.credits_used,
        "credits_remaining": outcome.credits_remaining,
        "processing_time": outcome.processing_time,
        "metadata": {
            "original_size": [outcome.input.width, outcome.input.height],
            "result_size": [primary.width, primary.height],
            "format": primary.format,
        },
        "details": outcome.details,
    }
