"""Reading an MP4 back with the ffmpeg binary of ``imageio-ffmpeg``: its streams and duration
(``ffmpeg -i``), its frames (grey, raw) and its audio (mono PCM)."""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pixelmill.engines.video.encode import ffmpeg_exe


@dataclass(frozen=True)
class Probe:
    video_codec: str
    pix_fmt: str
    width: int
    height: int
    audio_codec: str
    duration: float


def probe(mp4: bytes) -> Probe:
    with tempfile.NamedTemporaryFile(suffix=".mp4") as tmp:
        tmp.write(mp4)
        tmp.flush()
        err = subprocess.run(
            [ffmpeg_exe(), "-hide_banner", "-i", tmp.name], capture_output=True, text=True
        ).stderr
    video = re.search(r"Video: (\w+).*?, (yuv\w+)[(,].*?(\d{2,5})x(\d{2,5})", err)
    audio = re.search(r"Audio: (\w+)", err)
    dur = re.search(r"Duration: (\d+):(\d+):([\d.]+)", err)
    assert video and audio and dur, err
    h, m, s = dur.groups()
    return Probe(
        video.group(1),
        video.group(2),
        int(video.group(3)),
        int(video.group(4)),
        audio.group(1),
        int(h) * 3600 + int(m) * 60 + float(s),
    )


def grey_frames(mp4: bytes, width: int, height: int) -> npt.NDArray[np.uint8]:
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
                "gray",
                "-",
            ],
            capture_output=True,
            check=True,
        ).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, height, width)


def audio_pcm(mp4: bytes, rate: int = 16000) -> npt.NDArray[np.float32]:
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
                "s16le",
                "-ac",
                "1",
                "-ar",
                str(rate),
                "-",
            ],
            capture_output=True,
            check=True,
        ).stdout
    return np.frombuffer(raw, np.int16).astype(np.float32) / 32768.0


def envelope(
    pcm: npt.NDArray[np.float32], frames: int, fps: int = 25, rate: int = 16000
) -> npt.NDArray[np.float32]:
    """RMS of the audio over each video frame's 40 ms."""
    hop = rate // fps
    out = np.zeros(frames, np.float32)
    for i in range(frames):
        seg = pcm[i * hop : (i + 1) * hop]
        out[i] = float(np.sqrt(np.mean(seg * seg))) if seg.size else 0.0
    return out
