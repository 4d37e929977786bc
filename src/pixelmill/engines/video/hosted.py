"""The talking video routed to a provider:
``PIXELMILL_ROUTE_VIDEO=replicate:<owner>/<model>[:<version>]``.

The video surfaces (``marketing/``) plan as offline: the image loaded, the script written when
there is none and spoken by the speech engine. Their render then asks :class:`HostedVideo` (the
registry's ``video`` engine when routed), which runs one Replicate prediction whose ``input``
is the operator's template (``PIXELMILL_VIDEO_INPUT``, JSON; default
``{"image": "{{image}}", "audio": "{{audio}}"}``) with the placeholders filled: ``{{image}}``
the picture (PNG), ``{{audio}}`` the spoken script (WAV), both as data URLs or uploads to the
files API; ``{{script}}``, ``{{aspect}}``, ``{{seed}}``, ``{{duration}}`` (the speech's
seconds) as values. The prediction's first output file must be an MP4 (its ``moov`` box read
for the duration and size): it is the job's result.

On failure the shared fallback (``engines.runtime.hosted``) decides, as for every hosted
engine: ``offline`` renders the offline video and says so in its details, ``error`` fails the
job's video with the reason (the runner records the failure and the job's finish releases its
credits). A cancelled job cancels the prediction (``POST /v1/predictions/{id}/cancel``) and
renders nothing.
"""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from pixelmill.engines.base import Engine, EngineInputs, EngineResult, ImageArray, OutputFile
from pixelmill.engines.runtime.hosted import HostedEngine
from pixelmill.engines.speech import Speech
from pixelmill.engines.video.engine import TalkingVideoEngine, VideoParams
from pixelmill.providers.comfyui import placeholders, substitute
from pixelmill.providers.http import ProviderFailure
from pixelmill.providers.media import IMAGE_SIDE, png_bytes
from pixelmill.providers.routing import Backends, Fallback, Route

DEFAULT_INPUT: dict[str, Any] = {"image": "{{image}}", "audio": "{{audio}}"}
VIDEO_PLACEHOLDERS = frozenset({"image", "audio", "script", "aspect", "seed", "duration"})


def parse_input_template(text: str | None) -> dict[str, Any]:
    """``PIXELMILL_VIDEO_INPUT`` as a prediction-input template (``ValueError`` naming the
    setting when it is not a JSON object, uses an unknown placeholder, or sends no input)."""
    if not text:
        return dict(DEFAULT_INPUT)
    try:
        template = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"PIXELMILL_VIDEO_INPUT is not JSON: {exc}") from None
    if not isinstance(template, dict) or not template:
        raise ValueError("PIXELMILL_VIDEO_INPUT must be a JSON object of the model's inputs")
    unknown = placeholders(template) - VIDEO_PLACEHOLDERS
    if unknown:
        raise ValueError(
            f"PIXELMILL_VIDEO_INPUT uses unknown placeholders {sorted(unknown)}; known: "
            f"{sorted(VIDEO_PLACEHOLDERS)}"
        )
    if not placeholders(template) & {"image", "audio", "script"}:
        raise ValueError("PIXELMILL_VIDEO_INPUT sends neither {{image}}, {{audio}} nor {{script}}")
    return template


# ---- MP4 ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mp4Info:
    duration: float
    width: int
    height: int


def _boxes(data: bytes, start: int, end: int) -> Iterator[tuple[bytes, int, int]]:
    """(type, content start, content end) of the ISO-BMFF boxes in ``data[start:end]``."""
    pos = start
    while pos + 8 <= end:
        size, kind = struct.unpack(">I4s", data[pos : pos + 8])
        header = 8
        if size == 1:
            if pos + 16 > end:
                raise ValueError("a truncated box header")
            (size,) = struct.unpack(">Q", data[pos + 8 : pos + 16])
            header = 16
        elif size == 0:
            size = end - pos
        if size < header or pos + size > end:
            raise ValueError("a box runs past the end of the file")
        yield kind, pos + header, pos + size
        pos += size


def mp4_info(data: bytes) -> Mp4Info:
    """Duration and frame size of an MP4 (``ftyp`` first; ``moov``/``mvhd`` and the tracks'
    ``tkhd``); ``ValueError`` for anything else."""
    top = list(_boxes(data, 0, len(data)))
    if not top or top[0][0] != b"ftyp":
        raise ValueError("not an MP4 file (no ftyp box first)")
    moov = next(((s, e) for kind, s, e in top if kind == b"moov"), None)
    if moov is None:
        raise ValueError("the MP4 has no moov box")
    duration: float | None = None
    width = height = 0
    for kind, s, e in _boxes(data, *moov):
        if kind == b"mvhd" and e - s >= 32:
            if data[s] == 1:
                timescale, length = struct.unpack(">IQ", data[s + 20 : s + 32])
            else:
                timescale, length = struct.unpack(">II", data[s + 12 : s + 20])
            duration = length / timescale if timescale else None
        elif kind == b"trak":
            for sub, ts, te in _boxes(data, s, e):
                if sub != b"tkhd":
                    continue
                at = ts + (88 if data[ts] == 1 else 76)
                if at + 8 <= te:
                    w, h = struct.unpack(">II", data[at : at + 8])
                    width, height = max(width, w >> 16), max(height, h >> 16)
    if duration is None or duration <= 0:
        raise ValueError("the MP4 has no duration (mvhd)")
    if not width or not height:
        raise ValueError("the MP4 has no video track")
    return Mp4Info(round(duration, 3), width, height)


# ---- the hosted video -------------------------------------------------------------------------


class HostedVideo(HostedEngine):
    """The video engine at a provider (see the module docstring) in front of the offline one,
    its fallback; the template is ``PIXELMILL_VIDEO_INPUT`` (checked here, at startup)."""

    providers = ("replicate",)
    workflow_inputs = frozenset()

    def __init__(self, inner: Engine, route: Route, backends: Backends, fallback: Fallback):
        super().__init__(inner, route, backends, fallback)
        if not isinstance(inner, TalkingVideoEngine):
            raise ValueError(f"{route.setting}: the video route needs the offline video engine")
        self.offline: TalkingVideoEngine = inner
        self.template: dict[str, Any] = parse_input_template(backends.video_input)

    def render(self, image: ImageArray, speech: Speech, params: VideoParams) -> OutputFile:
        text = " ".join(params.script.split())
        duration = round(speech.duration, 2)
        values: dict[str, Any] = {
            "script": text,
            "aspect": params.aspect,
            "seed": params.seed,
            "duration": duration,
        }
        wanted = placeholders(self.template)
        started = time.perf_counter()
        try:
            data, info = self._predict(image, speech, values, wanted)
        except ProviderFailure as exc:
            self.output_failed(exc, f"the video failed at its backend {self.route.label}")
            out = self.offline.render(image, speech, params)
            out.data.update(self.fallback_details(out.data, exc))
            return out
        sent = sorted(wanted & {"image", "audio", "script"})
        method = (
            f"talking-video model {self.route.label} through a Replicate prediction "
            f"(inputs: {', '.join(sent)})"
        )
        if params.subtitles:
            method += "; subtitles are not added to a provider's video"
        facts = {
            "duration_seconds": info.duration,
            "speech_seconds": duration,
            "script": text,
            "word_count": len(text.split()),
            "aspect": params.aspect,
            "width": info.width,
            "height": info.height,
            "subtitles": False,
            "mode": "provider",
            "method": method,
            "voice": speech.method if "audio" in wanted else None,
            "provider": self.route.label,
            "timings": {"provider_s": round(time.perf_counter() - started, 3)},
        }
        return OutputFile(data, "video/mp4", "mp4", label="video", data=facts)

    def _provider_run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        typed = self.offline.typed(params)
        out = self.render(inputs.image, self.offline.voice.speak(typed.script), typed)
        return EngineResult([], out.data, files=[out])

    def _predict(
        self, image: ImageArray, speech: Speech, values: dict[str, Any], wanted: set[str]
    ) -> tuple[bytes, Mp4Info]:
        """One prediction of the template filled with ``values`` (and the image and the audio
        when the template wants them); its MP4 and what it holds."""
        replicate = self.backends.get_replicate()
        cancel = self.backends.token()
        if "image" in wanted:
            values["image"] = replicate.file_input(
                png_bytes(image, IMAGE_SIDE), "image/png", cancel
            )
        if "audio" in wanted:
            values["audio"] = replicate.file_input(speech.wav_bytes(), "audio/wav", cancel)
        output = replicate.run(self.route.model, substitute(self.template, values), cancel)
        data = replicate.fetch_files(output, cancel)[0]
        try:
            return data, mp4_info(data)
        except ValueError as exc:
            raise ProviderFailure("replicate", f"the output is not a usable MP4 ({exc})") from None
