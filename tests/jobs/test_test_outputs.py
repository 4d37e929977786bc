"""What the job runner delivers for a test job and for a live one, output kind by output kind
(``jobs/runner.py::JobRunner._render``, ``imaging/watermark.py::mark_test_output``): a live
job's image is the kind's pixels encoded and its files (an MP4, a JSON document) are stored
byte for byte as rendered; a test job's image and every frame of its MP4 carry the "TEST"
mark (its audio kept), a JSON document is stored as it is, and a picture file the watermark
cannot mark is refused rather than delivered."""

from __future__ import annotations

import io
import json
import wave
from pathlib import Path
from typing import cast

import numpy as np
import numpy.typing as npt
import pytest

from pixelmill.engines.base import OutputFile, OutputImage, PlannedFile, PlannedImage
from pixelmill.engines.video.encode import encode_mp4
from pixelmill.imaging import encode_image
from pixelmill.imaging.watermark import add_test_watermark, watermark_masks
from pixelmill.jobs.runner import RESULT_QUALITY, JobKind, JobRunner
from pixelmill.jobs.service import Claim, JobBackends
from pixelmill.storage.local import LocalStorage
from tests.marketing.media import audio_pcm, grey_frames, probe

W, H, FRAMES = 320, 576, 40


class _Kind:
    result_format = "png"
    subject = "image"


def _claim(test: bool) -> Claim:
    return Claim(
        job_id="job-1",
        token=1,
        user_id=1,
        batch_id=None,
        reservation_id=None if test else "r-1",
        kind="video",
        input_key="inputs/x.png",
        category="other",
        count=1,
        seed=7,
        params={},
        unit_price=1,
        done=frozenset(),
        test=test,
    )


def _runner(tmp_path: Path) -> tuple[JobRunner, LocalStorage]:
    store = LocalStorage(tmp_path)
    runner = JobRunner(cast(JobBackends, None), {}, store, lease_seconds=30.0)
    return runner, store


def _picture() -> npt.NDArray[np.uint8]:
    y, x = np.mgrid[0:H, 0:W]
    return np.dstack([x * 255 // W, y * 255 // H, np.full_like(x, 90)]).astype(np.uint8)


def _mp4() -> bytes:
    """A short video with a voice-like tone: a moving gradient, 25 fps."""
    rate, seconds = 16000, FRAMES / 25
    t = np.arange(int(rate * seconds)) / rate
    pcm = (np.sin(2 * np.pi * 220 * t) * 8000).astype(np.int16)
    wav = io.BytesIO()
    with wave.open(wav, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    base = _picture()
    frames = [np.roll(base, 4 * i, axis=1) for i in range(FRAMES)]
    return encode_mp4(frames, W, H, 25, wav.getvalue())


def _contrast(frame: npt.NDArray[np.uint8]) -> float:
    letters, outline = watermark_masks(*frame.shape[:2])
    return float(frame[letters].astype(np.float64).mean() - frame[outline].mean())


def test_a_live_job_stores_what_the_kind_rendered_byte_for_byte(tmp_path: Path) -> None:
    runner, store = _runner(tmp_path)
    kind, claim = cast(JobKind, _Kind()), _claim(test=False)
    pixels, mp4 = _picture(), _mp4()
    image = runner._render(kind, PlannedImage(0, "scene", lambda: OutputImage(pixels)), claim)
    assert image.data == encode_image(pixels, "png", RESULT_QUALITY)
    video_file = OutputFile(mp4, "video/mp4", "mp4", label="video")
    video = runner._render(kind, PlannedFile(1, "video", lambda: video_file), claim)
    assert video.data == mp4 and video.output is video_file
    for rendered in (image, video):
        stored = store.get(rendered.key)
        assert stored is not None and stored.data == rendered.data


def test_a_test_job_marks_images_and_every_video_frame(tmp_path: Path) -> None:
    runner, store = _runner(tmp_path)
    kind, claim = cast(JobKind, _Kind()), _claim(test=True)
    pixels, mp4 = _picture(), _mp4()

    image = runner._render(kind, PlannedImage(0, "scene", lambda: OutputImage(pixels)), claim)
    assert image.data == encode_image(add_test_watermark(pixels), "png", RESULT_QUALITY)
    assert isinstance(image.output, OutputImage)  # what the kind records is marked too
    assert np.array_equal(image.output.pixels, add_test_watermark(pixels))

    planned = PlannedFile(1, "video", lambda: OutputFile(mp4, "video/mp4", "mp4", "video"))
    video = runner._render(kind, planned, claim)
    stored = store.get(video.key)
    assert stored is not None and stored.data == video.data != mp4
    assert stored.content_type == "video/mp4" and video.key.endswith(".mp4")
    live, marked = grey_frames(mp4, W, H), grey_frames(video.data, W, H)
    assert marked.shape == live.shape == (FRAMES, H, W)
    info = probe(video.data)
    assert (info.video_codec, info.pix_fmt, info.audio_codec) == ("h264", "yuv420p", "aac")
    letters, outline = watermark_masks(H, W)
    away = ~(letters | outline)
    for i in (0, FRAMES // 2, FRAMES - 1):
        assert _contrast(marked[i]) > 60, i
        assert abs(_contrast(live[i])) < 15, i
        under = np.abs(marked[i][letters].astype(int) - live[i][letters]).mean()
        elsewhere = np.abs(marked[i][away].astype(int) - live[i][away]).mean()
        assert under > 40 and elsewhere < 4, (i, under, elsewhere)
    # The voice is kept.
    voice, kept = audio_pcm(mp4), audio_pcm(video.data)
    assert abs(len(voice) - len(kept)) < 800
    n = min(len(voice), len(kept))
    assert np.corrcoef(voice[:n], kept[:n])[0, 1] > 0.99


def test_a_test_job_keeps_documents_and_refuses_pictures_it_cannot_mark(
    tmp_path: Path,
) -> None:
    runner, _ = _runner(tmp_path)
    kind, claim = cast(JobKind, _Kind()), _claim(test=True)
    body = json.dumps({"captions": ["one", "two"]}).encode()
    doc = OutputFile(body, "application/json", "json", label="captions")
    rendered = runner._render(kind, PlannedFile(0, "captions", lambda: doc), claim)
    assert rendered.data == body
    gif = OutputFile(b"GIF89a...", "image/gif", "gif", label="animation")
    with pytest.raises(ValueError, match="cannot be watermarked"):
        runner._render(kind, PlannedFile(1, "animation", lambda: gif), claim)
    broken = OutputFile(b"not an mp4", "video/mp4", "mp4", label="video")
    with pytest.raises(ValueError, match="could not be watermarked"):
        runner._render(kind, PlannedFile(2, "video", lambda: broken), claim)
