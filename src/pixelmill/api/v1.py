"""The v1 multipart surface (API key): image operations with a base64 ``result``, the user, the
credits and the processing history."""

from __future__ import annotations

import base64
from datetime import timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, Form, Query, Request, UploadFile
from pydantic import BaseModel
from sqlalchemy import func, select

from pixelmill.accounts.schemas import CreditBalance, UserInfo
from pixelmill.api.deps import ApiKeyUser, ReadSession, Res
from pixelmill.api.rendering import public_base_url
from pixelmill.credits import ledger
from pixelmill.db.base import utcnow
from pixelmill.db.models import ProcessingRecord
from pixelmill.operations.pipeline import ImageSource, Outcome

router = APIRouter(prefix="/api/v1", tags=["v1"])


class V1Result(BaseModel):
    success: bool
    processing_id: str
    result: str
    result_url: str | None
    credits_used: int
    credits_remaining: int | None
    processing_time: float
    details: dict[str, Any]


def _v1_body(outcome: Outcome) -> dict[str, Any]:
    primary = outcome.primary
    return {
        "success": True,
        "processing_id": outcome.processing_id,
        "result": base64.b64encode(outcome.primary_bytes or b"").decode(),
        "result_url": primary.url if primary else None,
        "credits_used": outcome.credits_used,
        "credits_remaining": outcome.credits_remaining,
        "processing_time": outcome.processing_time,
        "details": outcome.details,
    }


async def _run_v1(
    operation: str,
    file: UploadFile,
    params: dict[str, Any],
    user: ApiKeyUser,
    resources: Res,
    request: Request,
    output_format: Literal["png", "jpeg", "webp"] | None = None,
) -> dict[str, Any]:
    data = await file.read()
    outcome = await resources.pipeline.run(
        operation,
        ImageSource("bytes", data),
        params,
        user=user,
        surface="v1",
        base_url=public_base_url(request, resources),
        output_format=output_format,
        keep_primary_bytes=True,
    )
    return _v1_body(outcome)


ImageFile = Annotated[
    UploadFile, File(description="JPEG, PNG or WebP; the part needs no content type")
]


@router.post("/remove-background", response_model=V1Result)
async def remove_background(
    file: ImageFile, user: ApiKeyUser, resources: Res, request: Request
) -> dict[str, Any]:
    """Remove the background; ``result`` is a transparent PNG in base64. 1 credit."""
    return await _run_v1("background_removal", file, {}, user, resources, request, "png")


@router.post("/remove-text", response_model=V1Result)
async def remove_text(
    file: ImageFile, user: ApiKeyUser, resources: Res, request: Request
) -> dict[str, Any]:
    """Remove text and watermarks. 1 credit."""
    return await _run_v1("text_removal", file, {}, user, resources, request)


@router.post("/upscale", response_model=V1Result)
async def upscale(
    file: ImageFile,
    user: ApiKeyUser,
    resources: Res,
    request: Request,
    scale: Annotated[Literal[2, 4, 8], Form()] = 2,
    quality: Annotated[Literal["fast", "balanced", "high"], Form()] = "balanced",
) -> dict[str, Any]:
    """Upscale 2x/4x (1 credit) or 8x (2 credits)."""
    return await _run_v1(
        "upscale", file, {"scale": scale, "quality": quality}, user, resources, request
    )


@router.post("/image-to-image", response_model=V1Result)
async def image_to_image(
    file: ImageFile,
    user: ApiKeyUser,
    resources: Res,
    request: Request,
    prompt: Annotated[str, Form(min_length=1, max_length=2000)],
    strength: Annotated[float, Form(ge=0, le=1)] = 0.75,
) -> dict[str, Any]:
    """Prompt-driven transformation (0 subtle, 1 strong). 2 credits."""
    return await _run_v1(
        "image_to_image", file, {"prompt": prompt, "strength": strength}, user, resources, request
    )


@router.get("/user", response_model=UserInfo)
def user_info(user: ApiKeyUser) -> UserInfo:
    """The account that owns the API key, with its credits."""
    return UserInfo(id=user.id, email=user.email, credits=user.credits, is_active=user.is_active)


@router.get("/credits", response_model=CreditBalance)
def credits(user: ApiKeyUser, session: ReadSession) -> CreditBalance:
    """The account's credit balance."""
    return CreditBalance(
        credits=user.credits, total_purchased=ledger.total_purchased(session, user.id)
    )


@router.get("/history")
def history(
    user: ApiKeyUser,
    session: ReadSession,
    resources: Res,
    request: Request,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> dict[str, Any]:
    """The account's processing history, newest first. ``result_url`` is present while the
    result is still kept (the retention period)."""
    base = public_base_url(request, resources).rstrip("/")
    kept_since = utcnow() - timedelta(hours=resources.settings.result_ttl_hours)
    rows = session.scalars(
        select(ProcessingRecord)
        .where(ProcessingRecord.user_id == user.id)
        .order_by(ProcessingRecord.created_at.desc(), ProcessingRecord.id)
        .limit(limit)
        .offset(offset)
    ).all()
    total = session.scalar(
        select(func.count())
        .select_from(ProcessingRecord)
        .where(ProcessingRecord.user_id == user.id)
    )
    return {
        "items": [
            {
                "processing_id": r.id,
                "operation": r.operation,
                "surface": r.surface,
                "status": r.status,
                "credits_used": r.credits_used,
                "processing_time": r.processing_time,
                "original_size": [r.input_width, r.input_height],
                "result_format": r.result_format,
                "result_url": base + resources.signer.path_for(r.result_key)
                if r.result_key and r.created_at > kept_since
                else None,
                "error": r.error,
                "created_at": r.created_at.isoformat(),
            }
            for r in rows
        ],
        "total": int(total or 0),
        "limit": limit,
        "offset": offset,
    }
