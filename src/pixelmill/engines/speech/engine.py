"""The speech engine: a script spoken by the offline voice (``voice``), as a registry engine so
the video job, the ad pack's video and the quick video get their voice from one place (and one
route can replace it)."""

from __future__ import annotations

from typing import ClassVar, Protocol

from pydantic import BaseModel, Field

from pixelmill.engines.base import (
    BaseEngine,
    Engine,
    EngineError,
    EngineInputs,
    EngineResult,
    OutputFile,
)
from pixelmill.engines.product_text import count_words
from pixelmill.engines.runtime.lazy import Lazy
from pixelmill.engines.speech.voice import (
    Speech,
    SpeechError,
    Voice,
    build_voice,
    espeak_path,
    synthesize,
)

MAX_WORDS = 200
"""Longest script the voice speaks for a video (about 75 seconds)."""


class SpeechParams(BaseModel):
    text: str = Field(min_length=1)


def speakable(text: str) -> str:
    """``text`` with its whitespace normalised; :class:`EngineError` when it has more than
    :data:`MAX_WORDS` words."""
    text = " ".join(text.split())
    if count_words(text) > MAX_WORDS:
        raise EngineError(f"the script is too long (more than {MAX_WORDS} words)")
    return text


class Speaker(Engine, Protocol):
    """The speech engine as the video surfaces see it."""

    def speak(self, text: str) -> Speech: ...


class SpeechEngine(BaseEngine[SpeechParams]):
    """Text to speech with the Piper voice (``voice.VOICE``); :meth:`speak` is what the video
    surfaces call, ``run`` gives the WAV as an :class:`OutputFile`."""

    name: ClassVar[str] = "speech"
    Params: ClassVar[type[BaseModel]] = SpeechParams

    def __init__(self) -> None:
        super().__init__()
        self._voice: Lazy[Voice] = Lazy(build_voice)

    def _load(self) -> None:
        self._voice.load()
        if espeak_path() is None:
            raise EngineError("espeak-ng is not installed (requirements/apt.txt)")

    def speak(self, text: str) -> Speech:
        """``text`` spoken (raises :class:`EngineError` for a script that cannot be: empty,
        over :data:`MAX_WORDS` words, or nothing speakable in it)."""
        text = speakable(text)
        self.load()
        try:
            return synthesize(self._voice.get(), text)
        except SpeechError as exc:
            raise EngineError(str(exc)) from exc

    def _run(self, inputs: EngineInputs, params: SpeechParams) -> EngineResult:
        speech = self.speak(params.text)
        details = {
            "method": speech.method,
            "duration_seconds": round(speech.duration, 2),
            "words": [{"word": w.word, "start": w.start, "end": w.end} for w in speech.words],
        }
        wav = OutputFile(speech.wav_bytes(), "audio/wav", "wav", label="speech", data=details)
        return EngineResult([], details, files=[wav])
