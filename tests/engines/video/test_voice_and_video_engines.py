"""The voice and the talking video as registry engines: ``speech`` and ``video`` answer the
engine protocol (``run`` gives their file), refuse what they cannot make with an
:class:`EngineError`, and a ``PIXELMILL_ROUTE_VIDEO`` route puts the hosted video in front of
the offline one under the same name (the one route-and-fallback path)."""

from __future__ import annotations

import io
import wave
from pathlib import Path

import pytest

from pixelmill.config import Settings
from pixelmill.engines.base import EngineError, EngineInputs
from pixelmill.engines.registry import build_engines
from pixelmill.engines.speech import MAX_WORDS, SpeechEngine, SpeechParams
from pixelmill.engines.video import TalkingVideoEngine, VideoParams
from pixelmill.engines.video.hosted import HostedVideo
from pixelmill.resources import route_engines
from tests.support.images import photo_rgb


def test_both_are_in_the_registry() -> None:
    engines = build_engines()
    assert isinstance(engines["speech"], SpeechEngine)
    assert isinstance(engines["video"], TalkingVideoEngine)


def test_speech_run_gives_a_wav_with_word_timings() -> None:
    result = SpeechEngine().run(EngineInputs.none(), SpeechParams(text="A cup of tea."))
    (wav,) = result.files
    assert result.images == [] and wav.content_type == "audio/wav"
    with wave.open(io.BytesIO(wav.content)) as audio:
        seconds = audio.getnframes() / audio.getframerate()
    assert abs(seconds - result.details["duration_seconds"]) < 0.02
    assert [w["word"] for w in result.details["words"]] == ["A", "cup", "of", "tea"]
    assert "Piper" in result.details["method"]


def test_unusable_scripts_and_aspects_are_engine_errors() -> None:
    voice = SpeechEngine()
    with pytest.raises(EngineError, match=f"more than {MAX_WORDS} words"):
        voice.speak("word " * (MAX_WORDS + 1))
    with pytest.raises(EngineError, match="nothing to speak"):
        voice.speak("...")
    with pytest.raises(EngineError, match="aspect must be one of"):
        TalkingVideoEngine(voice).validate(VideoParams(script="Hi.", aspect="2:1"))


def test_video_run_speaks_and_renders_an_mp4() -> None:
    engine = TalkingVideoEngine()
    params = VideoParams(script="Fresh coffee, every morning.", aspect="1:1")
    result = engine.run(EngineInputs(photo_rgb(160, 120)), params)
    (mp4,) = result.files
    assert mp4.content_type == "video/mp4" and mp4.content[4:8] == b"ftyp"
    assert (result.details["width"], result.details["height"]) == (
        mp4.data["width"],
        mp4.data["height"],
    )
    assert result.details["width"] == result.details["height"]
    assert abs(result.details["duration_seconds"] - result.details["speech_seconds"]) < 0.5


def test_a_video_route_replaces_the_video_engine_under_its_name(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path,
        routes={"video": "replicate:owner/talker:v1"},
        replicate_api_token="r8_test",
        video_input='{"face": "{{image}}", "speech": "{{audio}}"}',
    )
    engines = build_engines()
    routed, backends = route_engines(engines, settings)
    assert backends is not None
    hosted = routed["video"]
    assert isinstance(hosted, HostedVideo) and hosted.name == "video"
    assert hosted.offline is engines["video"] and routed["speech"] is engines["speech"]
    assert hosted.template == {"face": "{{image}}", "speech": "{{audio}}"}
    backends.close()
