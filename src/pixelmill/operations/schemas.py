"""The response bodies of the synchronous surfaces, each built from one :class:`Outcome`.

One operation, several shapes: v2 (``status``, ``result_url``, ``details``), v1 (the result as
base64), ``/api/process`` (``metadata``; image-to-image as a data URI) and the free tools
(``image_url``, ``remaining``). Every route declares its model, so the OpenAPI document shows
each body."""

from __future__ import annotations

import base64
from typing import Any, Literal

from pydantic import BaseModel

from pixelmill.imaging import content_type
from pixelmill.operations.results import Outcome, StoredImage
from pixelmill.schemas import TestFlag


def _primary(outcome: Outcome) -> StoredImage:
    primary = outcome.primary
    assert primary is not None, f"{outcome.operation} produced no image"
    return primary


# ---- v2 -------------------------------------------------------------------------------------


class V2Result(BaseModel):
    """The v2 synchronous response. ``details`` always carries ``method``; for image results
    also the output ``width``, ``height`` and ``format`` and the ``original_width`` and
    ``original_height``, and ``variants`` (each with its ``url``) when there are several."""

    status: Literal["success"]
    processing_id: str
    result_url: str | None
    credits_used: int
    credits_remaining: int | None
    processing_time: float
    details: dict[str, Any]
    test: TestFlag = False

    @classmethod
    def from_outcome(cls, outcome: Outcome) -> V2Result:
        return cls(**_v2_fields(outcome))


class AnalyzeResult(V2Result):
    """The v2 analysis: the facts again as ``analysis``."""

    analysis: dict[str, Any]

    @classmethod
    def from_outcome(cls, outcome: Outcome) -> AnalyzeResult:
        return cls(**_v2_fields(outcome), analysis=outcome.details)


class PromptResult(V2Result):
    """The v2 image-to-prompt result: the prompts again as ``prompts``."""

    prompts: dict[str, Any]

    @classmethod
    def from_outcome(cls, outcome: Outcome) -> PromptResult:
        return cls(**_v2_fields(outcome), prompts=outcome.details.get("prompts", {}))


def _v2_fields(outcome: Outcome) -> dict[str, Any]:
    details = dict(outcome.details)
    primary = outcome.primary
    if primary is not None:
        details.setdefault("width", primary.width)
        details.setdefault("height", primary.height)
        details["format"] = primary.format
        details["original_width"] = outcome.input.width
        details["original_height"] = outcome.input.height
        if len(outcome.images) > 1:
            scores = {v.get("label"): v for v in details.get("variants", []) if isinstance(v, dict)}
            details["variants"] = [
                {
                    **scores.get(img.label, {}),
                    "label": img.label,
                    "url": img.url,
                    "score": img.score,
                }
                for img in outcome.images
            ]
    return {
        "status": "success",
        "processing_id": outcome.processing_id,
        "result_url": primary.url if primary else None,
        "credits_used": outcome.credits_used,
        "credits_remaining": outcome.credits_remaining,
        "processing_time": outcome.processing_time,
        "details": details,
        "test": outcome.test,
    }


# ---- v1 -------------------------------------------------------------------------------------


class V1Result(BaseModel):
    """The v1 response: the result image itself as base64 in ``result``."""

    success: Literal[True]
    processing_id: str
    result: str
    result_url: str | None
    credits_used: int
    credits_remaining: int | None
    processing_time: float
    details: dict[str, Any]
    test: TestFlag = False

    @classmethod
    def from_outcome(cls, outcome: Outcome) -> V1Result:
        primary = outcome.primary
        return cls(
            success=True,
            processing_id=outcome.processing_id,
            result=base64.b64encode(outcome.primary_bytes or b"").decode(),
            result_url=primary.url if primary else None,
            credits_used=outcome.credits_used,
            credits_remaining=outcome.credits_remaining,
            processing_time=outcome.processing_time,
            details=outcome.details,
            test=outcome.test,
        )


# ---- /api/process ---------------------------------------------------------------------------


class ProcessMetadata(BaseModel):
    original_size: list[int]
    result_size: list[int]
    format: str


class ProcessResult(BaseModel):
    """``/api/process`` for background removal, upscale and text removal."""

    success: Literal[True]
    processing_id: str
    result_url: str
    credits_used: int
    credits_remaining: int | None
    processing_time: float
    metadata: ProcessMetadata
    details: dict[str, Any]
    test: TestFlag = False

    @classmethod
    def from_outcome(cls, outcome: Outcome) -> ProcessResult:
        primary = _primary(outcome)
        return cls(
            success=True,
            processing_id=outcome.processing_id,
            result_url=primary.url,
            credits_used=outcome.credits_used,
            credits_remaining=outcome.credits_remaining,
            processing_time=outcome.processing_time,
            metadata=ProcessMetadata(
                original_size=[outcome.input.width, outcome.input.height],
                result_size=[primary.width, primary.height],
                format=primary.format,
            ),
            details=outcome.details,
            test=outcome.test,
        )


class ProcessImageToImageResult(BaseModel):
    """``/api/process`` for image-to-image: the result inline as a data URI
    (``result_image_url``) as well as a link."""

    processing_id: str
    status: Literal["completed"]
    processing_type: Literal["image_to_image"]
    result_image_url: str
    result_url: str
    processing_time: float
    credits_used: int
    credits_remaining: int | None
    details: dict[str, Any]
    test: TestFlag = False

    @classmethod
    def from_outcome(cls, outcome: Outcome) -> ProcessImageToImageResult:
        primary = _primary(outcome)
        assert outcome.primary_bytes is not None, "run with keep_primary_bytes=True"
        data_uri = (
            f"data:{content_type(primary.format)};base64,"
            + base64.b64encode(outcome.primary_bytes).decode()
        )
        return cls(
            processing_id=outcome.processing_id,
            status="completed",
            processing_type="image_to_image",
            result_image_url=data_uri,
            result_url=primary.url,
            processing_time=outcome.processing_time,
            credits_used=outcome.credits_used,
            credits_remaining=outcome.credits_remaining,
            details=outcome.details,
            test=outcome.test,
        )


# ---- free tools -----------------------------------------------------------------------------

FreeRemaining = int | Literal["unlimited"]
"""Free uses left today for this IP, or ``"unlimited"`` for a caller with an API key."""


class FreeToolImageResult(BaseModel):
    """A free tool's image result."""

    success: Literal[True]
    image_url: str
    remaining: FreeRemaining
    original_size: str
    new_size: str
    processing_time: float
    details: dict[str, Any]

    @classmethod
    def from_outcome(cls, outcome: Outcome, remaining: FreeRemaining) -> FreeToolImageResult:
        primary = _primary(outcome)
        return cls(
            success=True,
            image_url=primary.url,
            remaining=remaining,
            original_size=f"{outcome.input.width}x{outcome.input.height}",
            new_size=f"{primary.width}x{primary.height}",
            processing_time=outcome.processing_time,
            details=outcome.details,
        )


class ImageMetadata(BaseModel):
    width: int
    height: int
    format: str
    file_size_kb: float


class FreeToolAnalysisResult(BaseModel):
    """The free image analyser's result."""

    success: Literal[True]
    analysis: dict[str, Any]
    image_metadata: ImageMetadata
    remaining: FreeRemaining
    processing_time: float

    @classmethod
    def from_outcome(cls, outcome: Outcome, remaining: FreeRemaining) -> FreeToolAnalysisResult:
        return cls(
            success=True,
            analysis=outcome.details,
            image_metadata=ImageMetadata(
                width=outcome.input.width,
                height=outcome.input.height,
                format=outcome.input.format.upper(),
                file_size_kb=round(outcome.input.bytes_in / 1024, 1),
            ),
            remaining=remaining,
            processing_time=outcome.processing_time,
        )
