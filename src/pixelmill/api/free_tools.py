"""``/api/free-tools/*``: anonymous tools used by the MCP client (multipart field ``image``).

Each tool allows ``PIXELMILL_FREE_TOOL_DAILY_LIMIT`` (default 3) uses per client IP per day; past
that the answer is 429. Only successful runs count, so a bad upload does not use up a free try.
A caller that does send a valid API key is not limited here and pays the operation's normal
price instead (the MCP docstrings promise "unlimited with a token")."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, Form, Request, UploadFile

from pixelmill.accounts import service as accounts
from pixelmill.api.deps import Res, client_ip
from pixelmill.api.rendering import public_base_url
from pixelmill.db.models import User
from pixelmill.errors import RateLimited
from pixelmill.operations.pipeline import ImageSource, Outcome
from pixelmill.ratelimit.limiter import LimitState

router = APIRouter(prefix="/api/free-tools", tags=["free tools"])


def _optional_user(request: Request, resources: Res) -> User | None:
    auth = request.headers.get("authorization", "")
    scheme, _, token = auth.partition(" ")
    if scheme.lower() != "bearer" or not token.startswith("pk_live_"):
        return None
    with resources.db.read() as session:
        return accounts.user_for_api_key(session, resources.secret, token.strip())


async def _run_free(
    tool: str,
    operation: str,
    image: UploadFile,
    params: dict[str, Any],
    request: Request,
    resources: Res,
) -> tuple[Outcome, int | str]:
    user = _optional_user(request, resources)
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
        base_url=public_base_url(request, resources),
    )
    if user is not None:
        return outcome, "unlimited"
    state = resources.limiter.hit_anonymous(tool, ip, per_day)
    return outcome, state.remaining


def _image_body(outcome: Outcome, remaining: int | str) -> dict[str, Any]:
    primary = outcome.primary
    assert primary is not None
    return {
        "success": True,
        "image_url": primary.url,
        "remaining": remaining,
        "original_size": f"{outcome.input.width}x{outcome.input.height}",
        "new_size": f"{primary.width}x{primary.height}",
        "processing_time": outcome.processing_time,
        "details": outcome.details,
    }


FreeImage = Annotated[UploadFile, File(description="JPEG, PNG or WebP")]


@router.post("/background-remover/generate")
async def background_remover(image: FreeImage, request: Request, resources: Res) -> dict[str, Any]:
    """Remove the background (transparent PNG). Free: 3 per day per IP."""
    outcome, remaining = await _run_free(
        "background-remover", "background_removal", image, {}, request, resources
    )
    return _image_body(outcome, remaining)


@router.post("/image-upscaler/generate")
async def image_upscaler(
    image: FreeImage,
    request: Request,
    resources: Res,
    scale: Annotated[Literal["2", "4"], Form()] = "2",
) -> dict[str, Any]:
    """Upscale 2x or 4x. Free: 3 per day per IP."""
    outcome, remaining = await _run_free(
        "image-upscaler",
        "upscale",
        image,
        {"scale": int(scale), "quality": "balanced"},
        request,
        resources,
    )
    return _image_body(outcome, remaining)


@router.post("/text-remover/generate")
async def text_remover(image: FreeImage, request: Request, resources: Res) -> dict[str, Any]:
    """Remove text and watermarks. Free: 3 per day per IP."""
    outcome, remaining = await _run_free(
        "text-remover", "text_removal", image, {}, request, resources
    )
    return _image_body(outcome, remaining)


@router.post("/image-analyzer/analyze")
async def image_analyzer(image: FreeImage, request: Request, resources: Res) -> dict[str, Any]:
    """Analyse an image: objects we can detect, colours, text, composition, quality, mood,
    description and alt text. Free: 3 per day per IP."""
    outcome, remaining = await _run_free("image-analyzer", "analyze", image, {}, request, resources)
    return {
        "success": True,
        "analysis": outcome.details,
        "image_metadata": {
            "width": outcome.input.width,
            "height": outcome.input.height,
            "format": outcome.input.format.upper(),
            "file_size_kb": round(outcome.input.bytes_in / 1024, 1),
        },
        "remaining": remaining,
        "processing_time": outcome.processing_time,
    }
