"""``POST /api/process``: the unversioned multipart endpoint.

``processing_type`` selects the operation. Failures use this surface's own body
(``success: false``, ``error``, ``error_code``, ``details``; rendered in ``pixelmill.app``).
The per-endpoint rates of the spec (background removal 100/min, upscale 50, text removal 75,
image-to-image 15) apply here on top of the plan's limits."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, File, Form, Request, UploadFile
from pydantic import Field

from pixelmill.api.deps import ApiKeyUser, BaseUrl, Res, count_endpoint
from pixelmill.api.forms import UpscaleFactor
from pixelmill.engines.background import BackgroundRemovalParams
from pixelmill.operations import process as operations
from pixelmill.operations.process import PROCESSING_TYPES, check_processing_type
from pixelmill.operations.schemas import ProcessImageToImageResult, ProcessResult

router = APIRouter(tags=["process"])


class BackgroundRemovalForm(BackgroundRemovalParams):
    """background_removal's options as form fields. ``scale`` is upscale's factor on this
    endpoint, so the subject's scale is called ``subject_scale`` here."""

    scale: str = Field(
        "original",
        alias="subject_scale",
        description="background_removal: the subject's size relative to the canvas, e.g. '85%'",
    )


@router.post("/api/process")
async def process(
    user: ApiKeyUser,
    resources: Res,
    base_url: BaseUrl,
    request: Request,
    processing_type: Annotated[str, Form(description=", ".join(PROCESSING_TYPES))],
    options: Annotated[BackgroundRemovalForm, Form()],
    image: Annotated[UploadFile | None, File(description="the input image")] = None,
    file: Annotated[UploadFile | None, File(description="image_to_image's input image")] = None,
    output_format: Annotated[Literal["png", "webp"] | None, Form()] = None,
    quality: Annotated[int, Form(ge=1, le=100)] = 95,
    scale: Annotated[UpscaleFactor, Form()] = 2,
    face_enhance: Annotated[bool, Form()] = False,
    parameters: Annotated[
        str | None, Form(description='image_to_image: JSON {"prompt": ..., "strength": 0..1}')
    ] = None,
) -> ProcessResult | ProcessImageToImageResult:
    """Process one image. Background removal 1 credit, upscale 1 (8x: 2), text removal 1,
    image-to-image 2."""
    check_processing_type(processing_type)
    count_endpoint(request, resources, user, processing_type)
    upload = image or file
    return await operations.process(
        resources.pipeline,
        user,
        base_url,
        processing_type,
        await upload.read() if upload is not None else None,
        options=options,
        output_format=output_format,
        quality=quality,
        scale=scale,
        face_enhance=face_enhance,
        parameters=parameters,
    )
