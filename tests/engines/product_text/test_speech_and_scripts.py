"""The voice and the script writer without the server: word timings in order and inside the
audio, the speaking rate the scripts are sized with, every tone within ±20 % at 5, 15, 30 s."""

from __future__ import annotations

import pytest

from pixelmill.engines.product_text import TONES, WORDS_PER_SECOND, count_words, write_script
from pixelmill.engines.speech import SpeechEngine

synthesize = SpeechEngine().speak


def test_speech_has_ordered_word_timings_inside_the_audio() -> None:
    text = "Meet the Aurora bottle. It keeps drinks cold for 24 hours, and it fits every bag!"
    speech = synthesize(text)
    assert speech.sample_rate == 22050 and speech.pcm.dtype.name == "int16"
    words = [w.word for w in speech.words]
    assert words == text.replace(".", "").replace(",", "").replace("!", "").split()
    for a, b in zip(speech.words, speech.words[1:], strict=False):
        assert a.start < a.end <= b.start + 1e-6
    assert speech.words[0].start > 0.05 and speech.words[-1].end < speech.duration
    # a sentence pause: the gap after "bottle" is longer than between words of a phrase
    assert speech.words[4].start - speech.words[3].end > 0.3
    assert speech.wav_bytes()[:4] == b"RIFF"


def test_the_voice_speaks_near_the_rate_scripts_are_sized_with() -> None:
    script = write_script(
        product_name="the bottle",
        product_description=None,
        duration_seconds=30,
        tone="casual",
        facts={"colors": ["blue"], "category": "bottle"},
    )
    speech = synthesize(script.script)
    rate = script.word_count / speech.duration
    assert abs(rate - WORDS_PER_SECOND) <= 0.25 * WORDS_PER_SECOND, rate
    assert abs(speech.duration - 30) <= 0.2 * 30, speech.duration


@pytest.mark.parametrize("tone", TONES)
def test_every_tone_fits_5_15_30_seconds(tone: str) -> None:
    facts = {"colors": ["red"], "category": "shoes", "text": ["TRAIL X"]}
    seen = set()
    for seconds in (5, 15, 30):
        result = write_script(
            product_name=None,
            product_description=None,
            duration_seconds=seconds,
            tone=tone,
            facts=facts,
        )
        assert abs(result.word_count - result.word_budget) <= 0.2 * result.word_budget
        assert result.word_count == count_words(result.script)
        assert result.product_name == "TRAIL X" and "TRAIL X" in result.script
        seen.add(result.script)
    assert len(seen) == 3
