"""The video engine without the server: a closed-mouth portrait (Grace Hopper, matplotlib's
sample photo) talks with the mouth following the voice; a product photo gets the three aspect
ratios at their exact sizes; subtitles are drawn."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
from PIL import Image

from pixelmill.engines.speech import SpeechEngine
from pixelmill.engines.video import render
from pixelmill.engines.video.face import face_mesh
from tests.marketing.conftest import product
from tests.marketing.media import grey_frames, probe
from tests.marketing.test_video_jobs import mouth_motion_correlation

synthesize = SpeechEngine().speak
MESH = face_mesh()

HOPPER = Path(matplotlib.get_data_path()) / "sample_data" / "grace_hopper.jpg"


def test_a_closed_mouth_opens_with_the_voice() -> None:
    image = np.asarray(Image.open(HOPPER).convert("RGB"))
    speech = synthesize("Hello. I am testing a talking photo, one word at a time.")
    video = render(image, speech, face_mesh=MESH, aspect="9:16")
    assert video.mode == "face" and "not a generative lip-sync model" in video.method
    info = probe(video.data)
    assert (info.video_codec, info.audio_codec) == ("h264", "aac")
    assert abs(info.duration - speech.duration) <= 0.1 * speech.duration
    corr = mouth_motion_correlation(video.data, info.width, info.height)
    assert corr > 0.4, corr  # measured 0.68


def test_product_aspects_and_subtitles() -> None:
    speech = synthesize("Fresh coffee.")
    sizes = {}
    for seed, aspect in enumerate(("9:16", "1:1", "16:9")):
        plain = render(product(), speech, face_mesh=MESH, aspect=aspect, seed=seed)
        assert plain.mode == "product" and "cut-out" in plain.method
        info = probe(plain.data)
        sizes[aspect] = (info.width, info.height)
        assert info.pix_fmt == "yuv420p"
    assert sizes == {"9:16": (720, 1280), "1:1": (960, 960), "16:9": (1280, 720)}
    subtitled = render(product(), speech, face_mesh=MESH, aspect="1:1", subtitles=True, seed=0)
    plain = render(product(), speech, face_mesh=MESH, aspect="1:1", seed=0)
    a = grey_frames(subtitled.data, 960, 960).astype(np.float32)
    b = grey_frames(plain.data, 960, 960).astype(np.float32)
    middle = len(a) // 2  # a word is on screen
    lower = np.abs(a[middle, 700:900] - b[middle, 700:900]).mean()
    upper = np.abs(a[middle, :500] - b[middle, :500]).mean()
    assert lower > 5 * max(upper, 0.5), (lower, upper)
