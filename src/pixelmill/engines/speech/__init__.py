"""Text to speech: a Piper VITS voice shipped in a PyPI wheel, run offline (see ``voice``)."""

from pixelmill.engines.speech.voice import (
    VOICE,
    Speech,
    SpeechError,
    WordTiming,
    load,
    synthesize,
)

__all__ = ["VOICE", "Speech", "SpeechError", "WordTiming", "load", "synthesize"]
