"""``POST /api/process``: the unversioned multipart endpoint.

``processing_type`` selects the operation. Failures use this surface's own body
(``success: false``, ``error``, ``error_code``, ``details``; rendered in ``pixelmill.app``).
The per-endpoint rates of the spec (background removal 100/min, upscale 50, text removal 75,
image-to-image 15) apply here on top of the plan's limits."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, Form, Request, UploadFile
from pydantic import Field

from pixelmill.api.deps import ApiKeyUser, BaseUrl, Res, publish_limits
from pixelmill.api.forms import UpscaleFactor
from pixelmill.engines.background import BackgroundRemovalParams
from pixelmill.errors import AppError, InvalidInput
from pixelmill.operations.inputs import ImageSource
from pixelmill.operations.schemas import ProcessImageToImageResult, ProcessResult

router = APIRouter(tags=["process"])

PROCESSING_TYPES = ("background_removal", "upscale", "text_removal", "image_to_image")


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

    if processing_type == "image_to_image":
        outcome = await resources.pipeline.run(
            "image_to_image",
            source,
            _image_to_image_params(parameters),
            user=user,
            surface="process",
            base_url=base_url,
            keep_primary_bytes=True,
        )
        return ProcessImageToImageResult.from_outcome(outcome)

    params: dict[str, Any] = {}
    extra: dict[str, ImageSource] = {}
    if processing_type == "background_removal":
        # The engine picks the format from `format`; `output_format` is its older name here.
        params = options.model_dump(exclude_unset=True)
        format_given = params.setdefault("format", output_format or "auto")
        if output_format is not None and format_given != output_format:
            raise InvalidInput("output_format and format disagree: send format only")
        if options.bg_image_base64 or options.bg_image_url:
            extra["background"] = ImageSource.choose(options.bg_image_base64, options.bg_image_url)
    elif processing_type == "upscale":
        params = {"scale": scale, "quality": "balanced", "face_enhance": face_enhance}
    outcome = await resources.pipeline.run(
        processing_type,
        source,
        params,
        user=user,
        surface="process",
        base_url=base_url,
        quality=quality,
        extra_inputs=extra,
    )
    return ProcessResult.from_outcome(outcome)


def _image_to_image_params(parameters: str | None) -> dict[str, Any]:
    """The ``parameters`` form field: a JSON object with a ``prompt`` (and a ``strength``)."""
    try:
        params = json.loads(parameters or "{}")
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"parameters is not valid JSON: {exc.msg}") from exc
    if not isinstance(params, dict) or not params.get("prompt"):
        raise InvalidInput('parameters must be a JSON object with a "prompt"')
    return {"prompt": params["prompt"], "strength": params.get("strength", 0.75)}
