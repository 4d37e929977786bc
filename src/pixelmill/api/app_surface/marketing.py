"""``/api/tryon`` (JWT) marketing routes: video jobs (``create-video``, ``video-status``),
synchronous ``quick-video`` (5 credits per started 10 seconds, its own 10 requests/minute
bucket) and free voice-over scripts (``generate-script``)."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Annotated

from fastapi import APIRouter, Form, Path, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy.orm import Session

from pixelmill.api.deps import JwtUser, Res, publish_limits
from pixelmill.api.idempotent import Closures, idempotent_create
from pixelmill.api.rendering import public_base_url
from pixelmill.credits.pricing import quick_video_price
from pixelmill.engines.base import EngineError
from pixelmill.engines.product_text import write_script
from pixelmill.errors import InvalidInput
from pixelmill.library.images import save_image
from pixelmill.marketing import service as marketing
from pixelmill.marketing.schemas import (
    MAX_DURATION,
    MIN_DURATION,
    QuickVideoResult,
    ScriptOut,
    Tone,
    TryOnVideoCreated,
    VideoJobStatus,
)
from pixelmill.marketing.video import image_facts, render_spoken, speak
from pixelmill.operations.accounting import Charge
from pixelmill.operations.inputs import ImageSource
from pixelmill.operations.results import StoredImage

router = APIRouter(prefix="/api/tryon", tags=["try-on"])

_TRUE = {"1", "true", "yes", "on"}


def _flag(value: str | bool | None) -> bool:
    return value if isinstance(value, bool) else str(value or "").strip().lower() in _TRUE


class _CreateVideoForm(BaseModel):
    """What ``create-video`` remembers under an ``Idempotency-Key``."""

    image_url: str
    script: str
    prompt: str
    tone: str
    duration: int
    enable_subtitles: bool


@router.post("/create-video", status_code=202, responses={202: {"model": TryOnVideoCreated}})
async def create_video(
    request: Request,
    user: JwtUser,
    resources: Res,
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
    base_url = public_base_url(request, resources)
    try:
        text = marketing.check_script(script)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from exc
    form = _CreateVideoForm(
        image_url=image_url,
        script=text,
        prompt=prompt,
        tone=tone,
        duration=duration,
        enable_subtitles=_flag(enable_subtitles),
    )

    async def prepare() -> str:
        saved = await save_image(
            resources.inputs,
            resources.library_storage,
            ImageSource("url", image_url),
            user,
            "inputs",
        )
        return saved.key

    def create(session: Session, key: str) -> TryOnVideoCreated:
        job, _ = marketing.create_video_job(
            session,
            resources.jobs,
            user_id=user.id,
            input_key=key,
            script=text,
            duration=duration,
            aspect="9:16",
            tone=tone,
            subtitles=form.enable_subtitles,
            base_url=base_url,
            surface="tryon",
        )
        assert job.number is not None
        message = "video job created"
        if prompt.strip():
            message += "; prompt not used (the offline renderer animates the image as it is)"
        return TryOnVideoCreated(
            job_id=job.number,
            status="pending",
            credits_used=job.credits_reserved,
            credits_reserved=job.credits_reserved,
            message=message,
            poll_url=marketing.poll_url(base_url, job, surface="tryon"),
        )

    def discard(key: str) -> None:
        resources.library_storage.delete(key)

    return await idempotent_create(
        request, resources.db, user, form, 202, Closures(prepare, create, discard)
    )


@router.get("/video-status/{job_id}", response_model=VideoJobStatus)
def video_status(
    user: JwtUser,
    resources: Res,
    request: Request,
    job_id: Annotated[int, Path(ge=1, le=2**31 - 1)],
) -> VideoJobStatus:
    """A video job of this account (another account's id: 404)."""
    base_url = public_base_url(request, resources)
    with resources.db.read() as session:
        return marketing.video_status(session, resources.signer, user.id, job_id, base_url)


@router.post("/quick-video", response_model=QuickVideoResult)
async def quick_video(
    request: Request,
    user: JwtUser,
    resources: Res,
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
    try:
        marketing.check_script(text, marketing.QUICK_VIDEO_MAX_WORDS)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from exc
    # The voice, the render and the decoded photo are CPU work: they wait for a place like any
    # synchronous image call (a burst beyond the queue is refused with 503 before decoding).
    async with resources.pipeline.admission.slot():
        decoded = await resources.inputs.load(ImageSource("url", image_url), user)
        loop = asyncio.get_running_loop()
        cpu = resources.pipeline.cpu
        started = time.perf_counter()
        try:
            speech = await loop.run_in_executor(cpu, speak, text)
        except EngineError as exc:
            raise InvalidInput(str(exc)) from exc
        price = quick_video_price(speech.duration)
        h, w = decoded.pixels.shape[:2]
        accounting = resources.pipeline.accounting
        charge = Charge(uuid.uuid4().hex, user.id, "quick_video", "tryon", price, w, h)
        charge = await asyncio.to_thread(accounting.reserve, charge)
        try:
            async with accounting.keep_alive(charge):
                output = await loop.run_in_executor(
                    cpu,
                    lambda: render_spoken(
                        decoded.pixels,
                        speech,
                        text,
                        aspect="9:16",
                        subtitles=_flag(enable_subtitles),
                    ),
                )
                key = f"results/{uuid.uuid4().hex}.mp4"
                await asyncio.to_thread(resources.storage.put, key, output.content, "video/mp4")
        except BaseException as exc:
            await asyncio.to_thread(accounting.fail, charge, exc)
            if isinstance(exc, EngineError):
                raise InvalidInput(str(exc)) from exc
            raise
    url = public_base_url(request, resources).rstrip("/") + resources.signer.path_for(key)
    stored = StoredImage(
        "video", key, url, int(output.data["width"]), int(output.data["height"]), "mp4"
    )
    details = {k: output.data[k] for k in ("method", "voice", "mode", "script", "timings")}
    if prompt.strip():
        details["unused_fields"] = ["prompt"]
    remaining = await asyncio.to_thread(
        accounting.complete, charge, time.perf_counter() - started, stored, details
    )
    return QuickVideoResult(
        video_url=url,
        duration_seconds=round(float(output.data["duration_seconds"])),
        credits_used=price,
        credits_remaining=remaining,
        details=details,
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
    async with resources.pipeline.admission.slot():
        decoded = await resources.inputs.load(ImageSource("url", image_url), user)
        loop = asyncio.get_running_loop()
        facts = await loop.run_in_executor(resources.pipeline.cpu, image_facts, decoded.pixels)
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
