"""``/api/free-tools/*``: anonymous tools used by the MCP client (multipart field ``image``).

Each tool allows ``PIXELMILL_FREE_TOOL_DAILY_LIMIT`` (default 3) uses per client IP per day; past
that the answer is 429. Only successful runs count, so a bad upload does not use up a free try.
A caller that does send a valid API key is not limited here and pays the operation's normal
price instead (the MCP docstrings promise "unlimited with a token")."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, Form, Request, UploadFile

from pixelmill.accounts.security import API_KEY_PREFIX
from pixelmill.api.deps import BaseUrl, Res, client_ip, key_user
from pixelmill.db.models import User
from pixelmill.errors import RateLimited
from pixelmill.operations.inputs import ImageSource
from pixelmill.operations.pipeline import Outcome
from pixelmill.operations.schemas import (
    FreeRemaining,
    FreeToolAnalysisResult,
    FreeToolImageResult,
)
from pixelmill.ratelimit.limiter import LimitState

router = APIRouter(prefix="/api/free-tools", tags=["free tools"])


async def _optional_user(request: Request, resources: Res) -> User | None:
    """The account of a valid API key, if one is sent; ``None`` otherwise (no error: the
    caller is then anonymous). The lookup reads the database, so it runs in a thread."""
    auth = request.headers.get("authorization", "")
    scheme, _, token = auth.partition(" ")
    if scheme.lower() != "bearer" or not token.startswith(API_KEY_PREFIX):
        return None
    return await asyncio.to_thread(key_user, resources, token.strip())


async def _run_free(
    tool: str,
    operation: str,
    image: UploadFile,
    params: dict[str, Any],
    request: Request,
    resources: Res,
    base_url: str,
) -> tuple[Outcome, FreeRemaining]:
    user = await _optional_user(request, resources)
    ip = client_ip(request)
    per_day = resources.settings.free_tool_daily_limit
    if user is None:
        left = resources.limiter.anonymous_remaining(tool, ip, per_day)
        if left <= 0:
            state = LimitState(per_day, 0, 0)
            raise RateLimited(
                f"Free tier limit reached ({per_day}/day per tool). Use an API key for more.",
                retry_after=3600,
                headers=state.headers(),
            )
    outcome = await resources.pipeline.run(
        operation,
        ImageSource("bytes", await image.read()),
        params,
        user=user,
        surface="free",
        base_url=base_url,
    )
    if user is not None:
        return outcome, "unlimited"
    state = resources.limiter.hit_anonymous(tool, ip, per_day)
    return outcome, state.remaining


FreeImage = Annotated[UploadFile, File(description="JPEG, PNG or WebP")]


@router.post("/background-remover/generate")
async def background_remover(
    image: FreeImage, request: Request, resources: Res, base_url: BaseUrl
) -> FreeToolImageResult:
    """Remove the background (transparent PNG). Free: 3 per day per IP."""
    return FreeToolImageResult.from_outcome(
        *await _run_free(
            "background-remover", "background_removal", image, {}, request, resources, base_url
        )
    )


@router.post("/image-upscaler/generate")
async def image_upscaler(
    image: FreeImage,
    request: Request,
    resources: Res,
    base_url: BaseUrl,
    scale: Annotated[Literal["2", "4"], Form()] = "2",
) -> FreeToolImageResult:
    """Upscale 2x or 4x. Free: 3 per day per IP."""
    params = {"scale": int(scale), "quality": "balanced"}
    return FreeToolImageResult.from_outcome(
        *await _run_free("image-upscaler", "upscale", image, params, request, resources, base_url)
    )


@router.post("/text-remover/generate")
async def text_remover(
    image: FreeImage, request: Request, resources: Res, base_url: BaseUrl
) -> FreeToolImageResult:
    """Remove text and watermarks. Free: 3 per day per IP."""
    return FreeToolImageResult.from_outcome(
        *await _run_free("text-remover", "text_removal", image, {}, request, resources, base_url)
    )


@router.post("/image-analyzer/analyze")
async def image_analyzer(
    image: FreeImage, request: Request, resources: Res, base_url: BaseUrl
) -> FreeToolAnalysisResult:
    """Analyse an image: objects we can detect, colours, text, composition, quality, mood,
    description and alt text. Free: 3 per day per IP."""
    return FreeToolAnalysisResult.from_outcome(
        *await _run_free("image-analyzer", "analyze", image, {}, request, resources, base_url)
    )
