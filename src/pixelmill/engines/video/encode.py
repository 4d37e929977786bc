"""MP4 encoding with the ffmpeg binary shipped by ``imageio-ffmpeg``: raw ``rgb24`` frames piped
to stdin, the voice as a WAV file, H.264 (libx264, yuv420p) + AAC, ``+faststart`` so players
can start before the whole file has arrived."""

from __future__ import annotations

import importlib
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from pixelmill.engines.base import ImageArray

CRF = 23
PRESET = "veryfast"
AUDIO_BITRATE = "128k"
ENCODE_TIMEOUT = 600.0


class EncodeError(Exception):
    """ffmpeg is missing or failed."""


def ffmpeg_exe() -> str:
    try:
        # untyped wheel: its one entry point returns the bundled binary's path
        package = importlib.import_module("imageio_ffmpeg")
        return str(package.get_ffmpeg_exe())
    except (ImportError, RuntimeError) as exc:  # pragma: no cover - install problem
        raise EncodeError(f"ffmpeg is not available: {exc}") from exc


def encode_mp4(
    frames: Iterable[ImageArray], width: int, height: int, fps: int, wav: bytes
) -> bytes:
    """Encode ``frames`` (each ``height`` × ``width`` × 3 uint8) with the ``wav`` audio."""
    with tempfile.TemporaryDirectory(prefix="pixelmill-video-") as tmp:
        audio = Path(tmp) / "voice.wav"
        audio.write_bytes(wav)
        out = Path(tmp) / "video.mp4"
        cmd = [
            ffmpeg_exe(),
            "-hide_banner",
            "-loglevel",
            "error",
            "-y",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgb24",
            "-s",
            f"{width}x{height}",
            "-r",
            str(fps),
            "-i",
            "pipe:0",
            "-i",
            str(audio),
            "-map",
            "0:v:0",
            "-map",
            "1:a:0",
            "-c:v",
            "libx264",
            "-preset",
            PRESET,
            "-crf",
            str(CRF),
            "-pix_fmt",
            "yuv420p",
            "-threads",
            "2",
            "-c:a",
            "aac",
            "-b:a",
            AUDIO_BITRATE,
            "-ar",
            "44100",
            "-movflags",
            "+faststart",
            str(out),
        ]
        log = Path(tmp) / "ffmpeg.log"
        with log.open("wb") as err:
            proc = subprocess.Popen(  # noqa: S603  (a fixed argv built here)
                cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err
            )
            assert proc.stdin is not None
            try:
                for frame in frames:
                    proc.stdin.write(np.ascontiguousarray(frame).tobytes())
            except BrokenPipeError:
                pass
            except BaseException:
                proc.kill()
                proc.wait()
                raise
            finally:
                if not proc.stdin.closed:
                    proc.stdin.close()
            try:
                proc.wait(timeout=ENCODE_TIMEOUT)
            except subprocess.TimeoutExpired as exc:
                proc.kill()
                proc.wait()
                raise EncodeError("ffmpeg timed out") from exc
        if proc.returncode != 0 or not out.exists():
            message = log.read_text(errors="replace").strip()[:300]
            raise EncodeError(f"ffmpeg failed: {message}")
        return out.read_bytes()


def probe(data: bytes) -> str:
    """ffmpeg's description of an MP4 (``ffmpeg -i``'s stderr): streams, codecs, duration."""
    with tempfile.NamedTemporaryFile(suffix=".mp4") as tmp:
        tmp.write(data)
        tmp.flush()
        proc = subprocess.run(  # noqa: S603  (a fixed argv built here)
            [ffmpeg_exe(), "-hide_banner", "-i", tmp.name],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        return proc.stderr
