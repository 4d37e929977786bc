"""``POST /api/process``'s work once its form is parsed: ``processing_type`` picks the
operation, and the surface's form fields become that operation's parameters."""

from __future__ import annotations

import json
from typing import Any

from pixelmill.db.models import User
from pixelmill.engines.background import BackgroundRemovalParams
from pixelmill.errors import AppError, InvalidInput
from pixelmill.operations.inputs import ImageSource
from pixelmill.operations.pipeline import Pipeline
from pixelmill.operations.schemas import ProcessImageToImageResult, ProcessResult

PROCESSING_TYPES = ("background_removal", "upscale", "text_removal", "image_to_image")


def check_processing_type(processing_type: str) -> None:
    if processing_type not in PROCESSING_TYPES:
        raise AppError(
            f"Unknown processing_type {processing_type!r}",
            status_code=422,
            code="INVALID_PROCESSING_TYPE",
            details="Supported processing types: " + ", ".join(PROCESSING_TYPES),
        )


async def process(
    pipeline: Pipeline,
    user: User,
    base_url: str,
    processing_type: str,
    data: bytes | None,
    *,
    options: BackgroundRemovalParams,
    output_format: str | None,
    quality: int,
    scale: int,
    face_enhance: bool,
    parameters: str | None,
) -> ProcessResult | ProcessImageToImageResult:
    """Run ``processing_type`` (checked by :func:`check_processing_type`) on the uploaded
    ``data`` (``None``: nothing uploaded, a 422)."""
    if data is None:
        raise AppError(
            "No image uploaded: send the image in the 'image' (or 'file') field",
            status_code=422,
            code="MISSING_IMAGE",
        )
    source = ImageSource("bytes", data)

    if processing_type == "image_to_image":
        outcome = await pipeline.run(
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
    outcome = await pipeline.run(
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
