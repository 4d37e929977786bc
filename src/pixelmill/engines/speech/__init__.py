"""Text to speech: a Piper VITS voice shipped in a PyPI wheel, run offline (see ``voice``)."""

from pixelmill.engines.speech.engine import MAX_WORDS, Speaker, SpeechEngine, SpeechParams
from pixelmill.engines.speech.voice import VOICE, Speech, SpeechError, WordTiming

__all__ = [
    "MAX_WORDS",
    "VOICE",
    "Speaker",
    "Speech",
    "SpeechEngine",
    "SpeechError",
    "SpeechParams",
    "WordTiming",
]
