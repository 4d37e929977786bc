"""``/api/tryon`` (JWT) marketing routes: video jobs (``create-video``, ``video-status``),
synchronous ``quick-video`` (5 credits per started 10 seconds, its own 10 requests/minute
bucket) and free voice-over scripts (``generate-script``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Path, Request
from fastapi.responses import JSONResponse

from pixelmill.api.deps import BaseUrl, JwtUser, ReadSession, Res, publish_limits
from pixelmill.api.idempotent import idempotent_create
from pixelmill.engines.product_text import write_script
from pixelmill.errors import InvalidInput
from pixelmill.marketing import service as marketing
from pixelmill.marketing.quick_video import quick_video as make_quick_video
from pixelmill.marketing.requests import TryOnVideoRequest, checked_script
from pixelmill.marketing.schemas import (
    MAX_DURATION,
    MIN_DURATION,
    QuickVideoResult,
    ScriptOut,
    Tone,
    TryOnVideoCreated,
    TryOnVideoForm,
    VideoJobStatus,
)
from pixelmill.marketing.video import image_facts
from pixelmill.operations.inputs import ImageSource

router = APIRouter(prefix="/api/tryon", tags=["try-on"])

_TRUE = {"1", "true", "yes", "on"}


def _flag(value: str | bool | None) -> bool:
    return value if isinstance(value, bool) else str(value or "").strip().lower() in _TRUE


@router.post("/create-video", status_code=202, responses={202: {"model": TryOnVideoCreated}})
async def create_video(
    request: Request,
    user: JwtUser,
    resources: Res,
    base_url: BaseUrl,
    image_url: Annotated[str, Form(description="the still image (a person or a product)")],
    script: Annotated[str, Form(max_length=4000)] = "",
    prompt: Annotated[str, Form(max_length=2000, description="not used: no generative model")] = "",
    tone: Annotated[Tone, Form()] = "problem-solution",
    duration: Annotated[int, Form(ge=MIN_DURATION, le=MAX_DURATION)] = 5,
    enable_subtitles: Annotated[str, Form()] = "false",
) -> JSONResponse:
    """A talking video job (50 credits, reserved now, returned if it fails); an empty
    ``script`` is written for ``duration`` seconds in ``tone``. Poll
    ``GET /api/tryon/video-status/{job_id}``."""
    form = TryOnVideoForm(
        image_url=image_url,
        script=checked_script(script),
        prompt=prompt,
        tone=tone,
        duration=duration,
        enable_subtitles=_flag(enable_subtitles),
    )
    create = TryOnVideoRequest(resources, user, base_url, form=form)
    return await idempotent_create(request, resources.db, user, form, 202, create)


@router.get("/video-status/{job_id}", response_model=VideoJobStatus)
def video_status(
    user: JwtUser,
    resources: Res,
    session: ReadSession,
    base_url: BaseUrl,
    job_id: Annotated[int, Path(ge=1, le=2**31 - 1)],
) -> VideoJobStatus:
    """A video job of this account (another account's id: 404)."""
    return marketing.video_status(session, resources.signer, user.id, job_id, base_url)


@router.post("/quick-video", response_model=QuickVideoResult)
async def quick_video(
    request: Request,
    user: JwtUser,
    resources: Res,
    base_url: BaseUrl,
    image_url: Annotated[str, Form()],
    script: Annotated[str, Form(max_length=2000)],
    prompt: Annotated[str, Form(max_length=2000)] = "",
    enable_subtitles: Annotated[str, Form()] = "false",
) -> QuickVideoResult:
    """The video made now (9:16): 5 credits per started 10 seconds of speech, at least 5,
    reserved once the voice has been made (its length sets the price) and captured when the
    MP4 is stored (released on any failure). ``script`` is required, at most 150 words."""
    state = resources.limiter.hit_endpoint(user.id, "quick_video")
    if state is not None:
        publish_limits(request, state)
    text = " ".join(script.split())
    if not text:
        raise InvalidInput("script is required")
    checked_script(text, marketing.QUICK_VIDEO_MAX_WORDS)
    subtitles = _flag(enable_subtitles)
    return await make_quick_video(
        resources.pipeline,
        user,
        image_url,
        text,
        subtitles=subtitles,
        prompt=prompt,
        base_url=base_url,
    )


@router.post("/generate-script", response_model=ScriptOut)
async def generate_script(
    user: JwtUser,
    resources: Res,
    image_url: Annotated[str, Form()],
    duration_seconds: Annotated[int, Form(ge=MIN_DURATION, le=MAX_DURATION)] = 15,
    tone: Annotated[Tone, Form()] = "enthusiastic",
    product_name: Annotated[str | None, Form(max_length=200)] = None,
    product_hint: Annotated[str | None, Form(max_length=2000)] = None,
) -> ScriptOut:
    """A voice-over script (free): hook, benefits, call to action, sized to
    ``duration_seconds`` at the voice's measured pace. Templated, not a language model;
    product facts (category, colours, printed words) come from the image analysis."""
    source = ImageSource("url", image_url)
    facts = await resources.pipeline.run_free(image_facts, load=(source, user))
    try:
        result = write_script(
            product_name=product_name,
            product_description=product_hint,
            duration_seconds=duration_seconds,
            tone=tone,
            facts=facts,
        )
    except ValueError as exc:
        raise InvalidInput(str(exc)) from exc
    return ScriptOut(
        script=result.script,
        product_name=result.product_name,
        product_description=result.product_description,
        duration_seconds=result.duration_seconds,
        word_count=result.word_count,
        details={**result.details, "tone": result.tone, "facts": facts},
    )
