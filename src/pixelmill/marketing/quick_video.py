"""The synchronous try-on ``quick-video``: the voice first (its length sets the price: 5 credits
per started 10 seconds), then the reservation, the render and the stored MP4, captured once
stored and released on any failure. The CPU work runs in the pipeline's admitted CPU pool."""

from __future__ import annotations

import asyncio
import time
import uuid

from pixelmill.credits.pricing import quick_video_price
from pixelmill.db.models import User
from pixelmill.engines.base import EngineError
from pixelmill.errors import InvalidInput
from pixelmill.marketing.schemas import QuickVideoResult
from pixelmill.marketing.video import Voiceover
from pixelmill.operations.accounting import Charge
from pixelmill.operations.inputs import ImageSource
from pixelmill.operations.pipeline import Pipeline
from pixelmill.operations.results import StoredImage


async def quick_video(
    pipeline: Pipeline,
    user: User,
    image_url: str,
    text: str,
    *,
    subtitles: bool,
    prompt: str,
    base_url: str,
) -> QuickVideoResult:
    """The video of ``image_url`` speaking ``text`` (9:16), charged to ``user``; an engine's
    refusal (the voice, the render) is a 422."""
    started = time.perf_counter()
    source = ImageSource("url", image_url)
    voiceover = Voiceover.of(pipeline.engines)
    try:
        pixels, speech = await pipeline.run_free(
            lambda image: (image, voiceover.speak(text)), load=(source, user)
        )
    except EngineError as exc:
        raise InvalidInput(str(exc)) from exc
    price = quick_video_price(speech.duration)
    h, w = pixels.shape[:2]
    accounting, results = pipeline.accounting, pipeline.results
    charge = Charge(uuid.uuid4().hex, user.id, "quick_video", "tryon", price, w, h)
    charge = await asyncio.to_thread(accounting.reserve, charge)
    try:
        async with accounting.keep_alive(charge):
            output = await pipeline.run_free(
                lambda: voiceover.render(pixels, speech, text, subtitles=subtitles)
            )
            key = f"results/{uuid.uuid4().hex}.mp4"
            await asyncio.to_thread(results.storage.put, key, output.content, "video/mp4")
    except BaseException as exc:
        await asyncio.to_thread(accounting.fail, charge, exc)
        if isinstance(exc, EngineError):
            raise InvalidInput(str(exc)) from exc
        raise
    url = base_url.rstrip("/") + results.signer.path_for(key)
    width, height = int(output.data["width"]), int(output.data["height"])
    stored = StoredImage("video", key, url, width, height, "mp4")
    details = {k: output.data[k] for k in ("method", "voice", "mode", "script", "timings")}
    if prompt.strip():
        details["unused_fields"] = ["prompt"]
    elapsed = time.perf_counter() - started
    remaining = await asyncio.to_thread(accounting.complete, charge, elapsed, stored, details)
    return QuickVideoResult(
        video_url=url,
        duration_seconds=round(float(output.data["duration_seconds"])),
        credits_used=price,
        credits_remaining=remaining,
        details=details,
    )
