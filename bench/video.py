"""Benchmark talking videos: seconds of work per second of video for speech (TTS), rendering
and encoding, and the voice's speaking rate that scripts are sized with.

Run: ``.venv/bin/python bench/video.py [--sheet docs/video.jpg]``

- Voice: load time once; then the templated scripts of every tone at 5, 15 and 30 s are
  spoken: real-time factor (synthesis seconds / audio seconds, phonemizer subprocess included)
  and words per second of finished audio (pauses included).
- Video: the astronaut portrait (face path) and a coffee cup (product path, cut-out parallax)
  in 9:16, 1:1 and 16:9 with subtitles, a 15 s script: preparation (face mesh or U²-Net-p
  cut-out), rendering and encoding seconds per video second (rendering overlaps ffmpeg's
  encoding in the pipe: ``render`` is the time spent making frames, ``encode`` the rest).
  A warm-up run first (model loading excluded). On a shared machine the numbers include the
  neighbours' load.

With ``--sheet`` it writes a contact sheet: portrait frames with subtitles, close-ups of the
mouth at rest and speaking, and product frames in the three aspect ratios.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import cv2
import matplotlib
import numpy as np
import numpy.typing as npt
from PIL import Image
from skimage import data

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import print_table
from pixelmill.engines.product_text import TONES, write_script
from pixelmill.engines.speech import SpeechEngine
from pixelmill.engines.video import render
from pixelmill.engines.video.encode import ffmpeg_exe
from pixelmill.engines.video.face import face_mesh, find_face

VOICE = SpeechEngine()
MESH = face_mesh()

U8 = npt.NDArray[np.uint8]
FACTS: dict[str, Any] = {"category": "bottle", "colors": ["blue"]}


def portrait() -> U8:
    return np.ascontiguousarray(data.astronaut())  # type: ignore[no-untyped-call]


def hopper() -> U8:
    """A closed-mouth portrait: matplotlib's sample photo of Grace Hopper."""
    path = Path(matplotlib.get_data_path()) / "sample_data" / "grace_hopper.jpg"
    return np.asarray(Image.open(path).convert("RGB"))


def product() -> U8:
    return np.ascontiguousarray(data.coffee())  # type: ignore[no-untyped-call]


def bench_voice() -> float:
    started = time.perf_counter()
    VOICE.load()
    print(f"voice load: {time.perf_counter() - started:.2f} s")
    VOICE.speak("Warm up.")
    rows: list[dict[str, object]] = []
    words_total, audio_total = 0, 0.0
    for tone in TONES:
        for seconds in (5, 15, 30):
            script = write_script(
                product_name=None,
                product_description=None,
                duration_seconds=seconds,
                tone=tone,
                facts=FACTS,
            )
            t0 = time.perf_counter()
            spoken = VOICE.speak(script.script)
            took = time.perf_counter() - t0
            words_total += script.word_count
            audio_total += spoken.duration
            rows.append(
                {
                    "tone": tone,
                    "target s": seconds,
                    "words": script.word_count,
                    "audio s": round(spoken.duration, 2),
                    "words/s": round(script.word_count / spoken.duration, 2),
                    "synth s": round(took, 3),
                    "RTF": round(took / spoken.duration, 3),
                }
            )
    print_table(rows)
    rate = words_total / audio_total
    print(f"all scripts: {rate:.2f} words per second of audio")
    return rate


def rgb_frames(mp4: bytes, width: int, height: int) -> U8:
    with tempfile.NamedTemporaryFile(suffix=".mp4") as tmp:
        tmp.write(mp4)
        tmp.flush()
        raw = subprocess.run(
            [
                ffmpeg_exe(),
                "-v",
                "error",
                "-i",
                tmp.name,
                "-f",
                "rawvideo",
                "-pix_fmt",
                "rgb24",
                "-",
            ],
            capture_output=True,
            check=True,
        ).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, height, width, 3)


def bench_video() -> dict[str, Any]:
    script = write_script(
        product_name="the Aurora bottle",
        product_description=None,
        duration_seconds=15,
        tone="enthusiastic",
        facts=FACTS,
    ).script
    spoken = VOICE.speak(script)
    render(portrait(), spoken, face_mesh=MESH, aspect="1:1")  # warm-up: face mesh, U²-Net-p
    render(product(), spoken, face_mesh=MESH, aspect="1:1")
    rows: list[dict[str, object]] = []
    keep: dict[str, Any] = {}
    cases = [
        *[("portrait", portrait(), a) for a in ("9:16", "1:1", "16:9")],
        ("closed mouth", hopper(), "9:16"),
        *[("product", product(), a) for a in ("9:16", "1:1", "16:9")],
    ]
    for name, image, aspect in cases:
        t0 = time.perf_counter()
        video = render(image, spoken, face_mesh=MESH, aspect=aspect, subtitles=True, seed=1)
        total = time.perf_counter() - t0
        s = video.stats
        rows.append(
            {
                "image": name,
                "aspect": aspect,
                "size": f"{video.width}x{video.height}",
                "video s": round(video.duration, 2),
                "prepare s/s": round(s["prepare_s"] / video.duration, 3),
                "render s/s": round(s["render_s"] / video.duration, 3),
                "encode s/s": round(s["encode_s"] / video.duration, 3),
                "total s/s": round(total / video.duration, 3),
                "MB": round(len(video.data) / 1e6, 2),
            }
        )
        keep[f"{name} {aspect}"] = video
    print(
        f"speech: {spoken.duration:.2f} s of audio in {sum(spoken.timings.values()):.2f} s "
        f"(RTF {sum(spoken.timings.values()) / spoken.duration:.3f})"
    )
    print_table(rows)
    return keep


def _fit_h(img: U8, h: int) -> U8:
    w = round(img.shape[1] * h / img.shape[0])
    return np.asarray(cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA), dtype=np.uint8)


def _row(tiles: list[U8], width: int, gap: int = 8) -> U8:
    h = max(t.shape[0] for t in tiles)
    row = np.full((h, width, 3), 24, np.uint8)
    x = 0
    for t in tiles:
        if x + t.shape[1] > width:
            break
        row[: t.shape[0], x : x + t.shape[1]] = t
        x += t.shape[1] + gap
    return row


def sheet(videos: dict[str, Any], path: Path) -> None:
    width = 1800
    face_video = videos["portrait 9:16"]
    frames = rgb_frames(face_video.data, face_video.width, face_video.height)
    n = len(frames)
    picks = np.linspace(n * 0.05, n * 0.95, 6).astype(int)
    row1 = _row([_fit_h(frames[i], 420) for i in picks], width)
    marks = find_face(frames[0], MESH)
    assert marks is not None
    cx, cy = marks.p(13)
    w = abs(marks.p(291)[0] - marks.p(61)[0])
    energy = [float(np.abs(frames[i].astype(np.int16) - frames[0]).mean()) for i in range(n)]
    order = np.argsort(energy)
    close = [0, *order[-40::20].tolist()][:3]
    tiles = []
    for i in sorted(close):
        crop = frames[i][int(cy - 1.1 * w) : int(cy + 0.9 * w), int(cx - w) : int(cx + w)]
        tiles.append(_fit_h(np.ascontiguousarray(crop), 260))
    # the closed mouth: at rest and at two of its loudest moments
    hv = videos["closed mouth 9:16"]
    hf = rgb_frames(hv.data, hv.width, hv.height)
    hm = find_face(hf[0], MESH)
    assert hm is not None
    hx, hy = hm.p(13)
    hw = abs(hm.p(291)[0] - hm.p(61)[0])
    hen = [float(np.abs(hf[i].astype(np.int16) - hf[0]).mean()) for i in range(len(hf))]
    for i in sorted([0, *np.argsort(hen)[-30::15].tolist()][:3]):
        crop = hf[i][
            int(hy - 0.9 * hw) : int(hy + 0.9 * hw), int(hx - 0.9 * hw) : int(hx + 0.9 * hw)
        ]
        tiles.append(_fit_h(np.ascontiguousarray(crop), 260))
    row2 = _row(tiles, width)
    prod = []
    for aspect in ("9:16", "1:1", "16:9"):
        v = videos[f"product {aspect}"]
        pf = rgb_frames(v.data, v.width, v.height)
        prod += [_fit_h(pf[len(pf) // 6], 250), _fit_h(pf[-len(pf) // 4], 250)]
    row3 = _row(prod, width)
    gap = np.full((12, width, 3), 24, np.uint8)
    out = np.concatenate([row1, gap, row2, gap, row3])
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), cv2.cvtColor(out, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 85])
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sheet", type=Path, default=None, help="write a contact sheet here")
    args = parser.parse_args()
    bench_voice()
    videos = bench_video()
    if args.sheet:
        sheet(videos, args.sheet)


if __name__ == "__main__":
    main()
