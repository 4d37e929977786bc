"""The talking-video engine: a still image with a spoken script over it, as an MP4 (H.264 +
AAC). A face talks (its mouth follows the voice's envelope); a product gets camera moves
(``render``). Its callers speak the script first with the speech engine (so an unusable script
is refused before anything renders) and hand the :class:`Speech` to :meth:`render`."""

from __future__ import annotations

import time
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, Field

from pixelmill.engines.base import (
    BaseEngine,
    Engine,
    EngineError,
    EngineInputs,
    EngineResult,
    ImageArray,
    OutputFile,
)
from pixelmill.engines.product_text import count_words
from pixelmill.engines.speech import Speech, SpeechEngine
from pixelmill.engines.video.canvas import ASPECTS
from pixelmill.engines.video.encode import EncodeError
from pixelmill.engines.video.face import face_mesh
from pixelmill.engines.video.render import render


class VideoParams(BaseModel):
    script: str = Field(min_length=1)
    """What the voice says (written already: ``engines.product_text.write_script``)."""
    aspect: str = "9:16"
    subtitles: bool = False
    seed: int = 0


class TalkingVideo(Engine, Protocol):
    """The video engine as its callers see it, offline or routed (``PIXELMILL_ROUTE_VIDEO``)."""

    def render(self, image: ImageArray, speech: Speech, params: VideoParams) -> OutputFile: ...


def check_aspect(aspect: str) -> None:
    if aspect not in ASPECTS:
        raise EngineError(f"aspect must be one of {', '.join(ASPECTS)}")


class TalkingVideoEngine(BaseEngine[VideoParams]):
    """The offline talking video; ``voice`` speaks the script when ``run`` is called alone. Its
    MediaPipe face mesh (the faces that talk) is built on first use and kept by the engine."""

    name: ClassVar[str] = "video"
    Params: ClassVar[type[BaseModel]] = VideoParams

    def __init__(self, voice: SpeechEngine | None = None) -> None:
        super().__init__()
        self.voice = voice or SpeechEngine()
        self._face_mesh = face_mesh()

    def _validate(self, params: VideoParams) -> None:
        check_aspect(params.aspect)

    def render(self, image: ImageArray, speech: Speech, params: VideoParams) -> OutputFile:
        """The MP4 of ``image`` with ``speech`` (of ``params.script``) over it."""
        check_aspect(params.aspect)
        started = time.perf_counter()
        try:
            video = render(
                image,
                speech,
                face_mesh=self._face_mesh,
                aspect=params.aspect,
                subtitles=params.subtitles,
                seed=params.seed,
            )
        except (EncodeError, ValueError) as exc:
            raise EngineError(f"the video could not be made: {exc}") from exc
        done = time.perf_counter()
        text = " ".join(params.script.split())
        data: dict[str, Any] = {
            "duration_seconds": round(video.duration, 2),
            "speech_seconds": round(speech.duration, 2),
            "script": text,
            "word_count": count_words(text),
            "aspect": params.aspect,
            "width": video.width,
            "height": video.height,
            "fps": video.fps,
            "subtitles": params.subtitles,
            "mode": video.mode,
            "method": video.method,
            "voice": speech.method,
            "timings": {
                "speech_s": round(sum(speech.timings.values()), 3),
                "video_s": round(done - started, 3),
                **video.stats,
            },
        }
        return OutputFile(video.data, "video/mp4", "mp4", label="video", data=data)

    def _run(self, inputs: EngineInputs, params: VideoParams) -> EngineResult:
        out = self.render(inputs.image, self.voice.speak(params.script), params)
        return EngineResult([], out.data, files=[out])
