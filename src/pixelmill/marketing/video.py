"""The talking product video as one function other domains call (the ad pack's UGC video, the
video job kind, quick-video): speech from the script, then the video engine, as an
:class:`~pixelmill.engines.base.OutputFile` (MP4, H.264 + AAC)."""

from __future__ import annotations

import time
from typing import Any

from pixelmill.engines.base import EngineError, ImageArray, OutputFile
from pixelmill.engines.product_text import (
    DEFAULT_TONE,
    ScriptResult,
    count_words,
    facts_from_analysis,
    write_script,
)
from pixelmill.engines.speech import Speech, SpeechError, synthesize
from pixelmill.engines.video import ASPECTS, EncodeError, VideoBackend, render

MAX_SCRIPT_WORDS = 200
"""Longest script a video job speaks (about 75 seconds)."""


def script_for(
    image: ImageArray | None,
    *,
    duration_seconds: int,
    tone: str = DEFAULT_TONE,
    product_name: str | None = None,
    product_description: str | None = None,
    facts: dict[str, Any] | None = None,
    seed: int = 0,
) -> ScriptResult:
    """A script for the image: facts from the analysis engine when none are given."""
    if facts is None and image is not None:
        facts = image_facts(image)
    return write_script(
        product_name=product_name,
        product_description=product_description,
        duration_seconds=duration_seconds,
        tone=tone,
        facts=facts,
        seed=seed,
    )


def image_facts(image: ImageArray) -> dict[str, Any]:
    """Category, colour names, description and text read on the image, from the analysis
    engine (``analyze_image``)."""
    from pixelmill.engines.analyze import analyze_image, guess_product_category

    analysis = analyze_image(image)
    return facts_from_analysis(analysis, guess_product_category(analysis))


def speak(script: str) -> Speech:
    """The script spoken by the voice (raises :class:`EngineError` for an unusable script)."""
    text = " ".join(script.split())
    if count_words(text) > MAX_SCRIPT_WORDS:
        raise EngineError(f"the script is too long (more than {MAX_SCRIPT_WORDS} words)")
    try:
        return synthesize(text)
    except SpeechError as exc:
        raise EngineError(str(exc)) from exc


def render_spoken(
    image: ImageArray,
    speech: Speech,
    script: str,
    *,
    aspect: str = "9:16",
    subtitles: bool = False,
    seed: int = 0,
) -> OutputFile:
    """The MP4 of ``image`` with ``speech`` (of ``script``) over it."""
    if aspect not in ASPECTS:
        raise EngineError(f"aspect must be one of {', '.join(ASPECTS)}")
    started = time.perf_counter()
    try:
        video = render(image, speech, aspect=aspect, subtitles=subtitles, seed=seed)
    except (EncodeError, ValueError) as exc:
        raise EngineError(f"the video could not be made: {exc}") from exc
    done = time.perf_counter()
    text = " ".join(script.split())
    data: dict[str, Any] = {
        "duration_seconds": round(video.duration, 2),
        "speech_seconds": round(speech.duration, 2),
        "script": text,
        "word_count": count_words(text),
        "aspect": aspect,
        "width": video.width,
        "height": video.height,
        "fps": video.fps,
        "subtitles": subtitles,
        "mode": video.mode,
        "method": video.method,
        "voice": speech.method,
        "timings": {
            "speech_s": round(sum(speech.timings.values()), 3),
            "video_s": round(done - started, 3),
            **video.stats,
        },
    }
    return OutputFile(
        content=video.data, content_type="video/mp4", extension="mp4", label="video", data=data
    )


def render_through(
    backend: VideoBackend | None,
    image: ImageArray,
    speech: Speech,
    script: str,
    *,
    aspect: str,
    subtitles: bool,
    seed: int,
) -> OutputFile:
    """The MP4 of ``image`` with ``speech`` over it from ``backend`` (a provider's route), the
    offline renderer being its fallback; from the offline renderer when there is no backend."""

    def offline() -> OutputFile:
        return render_spoken(image, speech, script, aspect=aspect, subtitles=subtitles, seed=seed)

    if backend is None:
        return offline()
    return backend.render(
        image, speech, script, aspect=aspect, subtitles=subtitles, seed=seed, offline=offline
    )


def render_video(
    image: ImageArray,
    script: str,
    *,
    aspect: str = "9:16",
    subtitles: bool = False,
    seed: int = 0,
    duration_seconds: int = 5,
    tone: str = DEFAULT_TONE,
    product_name: str | None = None,
    product_description: str | None = None,
    backend: VideoBackend | None = None,
) -> OutputFile:
    """An MP4 of ``image`` with ``script`` spoken over it (a face talks; a product gets camera
    moves). An empty ``script`` is written first for ``duration_seconds`` in ``tone``.
    ``backend`` (a provider's talking-video model, ``PIXELMILL_ROUTE_VIDEO``) renders it
    instead of the offline renderer, which stays its fallback. Raises :class:`EngineError` for
    input that cannot be made into a video."""
    if aspect not in ASPECTS:
        raise EngineError(f"aspect must be one of {', '.join(ASPECTS)}")
    written: ScriptResult | None = None
    text = " ".join(script.split())
    if not text:
        try:
            written = script_for(
                image,
                duration_seconds=duration_seconds,
                tone=tone,
                product_name=product_name,
                product_description=product_description,
                seed=seed,
            )
        except ValueError as exc:
            raise EngineError(str(exc)) from exc
        text = written.script
    output = render_through(
        backend, image, speak(text), text, aspect=aspect, subtitles=subtitles, seed=seed
    )
    output.data["script_written"] = written is not None
    if written is not None:
        output.data["script_method"] = written.details["method"]
        output.data["product_name"] = written.product_name
    return output
