"""``speech`` routed to a text-to-speech model (``PIXELMILL_ROUTE_SPEECH``): an
OpenAI-compatible ``POST /v1/audio/speech`` (OpenAI itself and many local TTS servers speak it)
or a Replicate TTS model (inputs ``text`` and ``voice``). The voice is
``PIXELMILL_SPEECH_VOICE``. It feeds every video path (the v2 video job, the JWT create-video,
the quick video, the ad pack's video), which take their voice from the registry.

The answer must be a 16-bit PCM WAV (OpenAI is asked for ``response_format: wav``; a Replicate
model must output one). The provider gives audio only, so word times (for subtitles and the
mouth) are apportioned by each word's length over the voiced span: close, not aligned. On
failure the shared fallback decides: ``offline`` speaks with the offline voice and says so in
the speech's method, ``error`` refuses the script (the job fails with the reason, nothing is
charged).
"""

from __future__ import annotations

import io
import time
import wave
from dataclasses import replace

import numpy as np
from pydantic import BaseModel

from pixelmill.engines.base import Engine, EngineInputs, EngineResult, OutputFile
from pixelmill.engines.runtime.hosted import HostedEngine
from pixelmill.engines.speech.engine import SpeechEngine, speakable
from pixelmill.engines.speech.voice import WORD, Speech, WordTiming, voiced_span
from pixelmill.providers.http import ProviderFailure
from pixelmill.providers.routing import Backends, Fallback, Route


def from_wav(data: bytes, text: str, method: str, provider: str) -> Speech:
    """A provider's WAV as :class:`Speech` (mono 16-bit), its words timed by length."""
    try:
        with wave.open(io.BytesIO(data)) as wav:
            rate, width, channels = wav.getframerate(), wav.getsampwidth(), wav.getnchannels()
            frames = wav.readframes(wav.getnframes())
    except (wave.Error, EOFError) as exc:
        raise ProviderFailure(provider, f"the audio is not a WAV file ({exc})") from None
    if width != 2 or not frames:
        raise ProviderFailure(provider, f"the WAV is not 16-bit PCM audio ({8 * width}-bit)")
    pcm = np.frombuffer(frames[: len(frames) // (2 * channels) * 2 * channels], "<i2")
    pcm = pcm.reshape(-1, channels).mean(axis=1).astype(np.int16)
    start, end = voiced_span(pcm.astype(np.float32) / 32768.0, rate)
    words = WORD.findall(text)
    total = float(sum(len(w) for w in words)) or 1.0
    timings, t = [], float(start)
    for word in words:
        length = (end - start) * len(word) / total
        timings.append(WordTiming(word, t / rate, (t + length) / rate))
        t += length
    return Speech(pcm, rate, timings, method)


class SpeechHosted(HostedEngine):
    providers = ("openai", "replicate")
    workflow_inputs = frozenset()

    def __init__(self, inner: Engine, route: Route, backends: Backends, fallback: Fallback):
        super().__init__(inner, route, backends, fallback)
        if not isinstance(inner, SpeechEngine):
            raise ValueError(f"{route.setting}: the speech route needs the offline voice")
        self.offline: SpeechEngine = inner

    def speak(self, text: str) -> Speech:
        text = speakable(text)
        voice = self.backends.speech_voice
        started = time.perf_counter()
        try:
            if self.route.provider == "openai":
                data = self.backends.get_openai().speech(
                    self.route.model, text, voice, cancel=self.backends.token()
                )
            else:
                data = self._replicate({"text": text, "voice": voice})
            method = (
                f"text-to-speech model {self.route.label}, voice {voice}; word times "
                "apportioned by length"
            )
            speech = from_wav(data, text, method, self.route.provider)
        except ProviderFailure as exc:
            self.output_failed(exc, f"the voice failed at its backend {self.route.label}")
            spoken = self.offline.speak(text)
            fallback = f"{spoken.method} (offline fallback: {self.route.label} failed: {exc})"
            return replace(spoken, method=fallback)
        return replace(speech, timings={"provider_s": time.perf_counter() - started})

    def _provider_run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        speech = self.speak(str(getattr(params, "text", "")))
        details = {"method": speech.method, "duration_seconds": round(speech.duration, 2)}
        wav = OutputFile(speech.wav_bytes(), "audio/wav", "wav", label="speech", data=details)
        return EngineResult([], {**details, "provider": self.route.label}, files=[wav])
