"""The talking product video as one thing other domains call (the ad pack's UGC video, the
video job kind, quick-video): the script written when there is none, spoken by the registry's
``speech`` engine, then rendered by its ``video`` engine (offline, or a provider's when
``PIXELMILL_ROUTE_VIDEO`` routes it, the offline renderer its fallback), as an
:class:`~pixelmill.engines.base.OutputFile` (MP4, H.264 + AAC)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from pixelmill.engines.base import Engine, EngineError, ImageArray, OutputFile
from pixelmill.engines.product_text import (
    DEFAULT_TONE,
    ScriptResult,
    facts_from_analysis,
    write_script,
)
from pixelmill.engines.speech import Speaker, Speech
from pixelmill.engines.video import TalkingVideo, VideoParams


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


@dataclass(frozen=True)
class Voiceover:
    """The registry's ``speech`` and ``video`` engines (each routed or not), as the video
    surfaces use them: speak first (an unusable script is refused before anything renders),
    render after."""

    voice: Speaker
    video: TalkingVideo

    @classmethod
    def of(cls, engines: Mapping[str, Engine]) -> Voiceover:
        return cls(cast(Speaker, engines["speech"]), cast(TalkingVideo, engines["video"]))

    def speak(self, script: str) -> Speech:
        return self.voice.speak(script)

    def render(
        self,
        image: ImageArray,
        speech: Speech,
        script: str,
        *,
        aspect: str = "9:16",
        subtitles: bool = False,
        seed: int = 0,
    ) -> OutputFile:
        """The MP4 of ``image`` with ``speech`` (of ``script``) over it."""
        params = VideoParams(script=script, aspect=aspect, subtitles=subtitles, seed=seed)
        return self.video.render(image, speech, params)

    def make(
        self,
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
    ) -> OutputFile:
        """An MP4 of ``image`` with ``script`` spoken over it (a face talks; a product gets
        camera moves). An empty ``script`` is written first for ``duration_seconds`` in
        ``tone``. Raises :class:`EngineError` for input that cannot be made into a video."""
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
        speech = self.speak(text)
        output = self.render(image, speech, text, aspect=aspect, subtitles=subtitles, seed=seed)
        output.data["script_written"] = written is not None
        if written is not None:
            output.data["script_method"] = written.details["method"]
            output.data["product_name"] = written.product_name
        return output
