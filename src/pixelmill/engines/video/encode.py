"""MP4 encoding with the ffmpeg binary shipped by ``imageio-ffmpeg``: raw ``rgb24`` frames piped
to stdin, the voice as a WAV file, H.264 (libx264, yuv420p) + AAC, ``+faststart`` so players
can start before the whole file has arrived. :func:`redraw_mp4` encodes an MP4 again the same
way with every frame redrawn (the test key's watermark, ``imaging/watermark.py``)."""

from __future__ import annotations

import importlib
import subprocess
import tempfile
from collections.abc import Callable, Iterable
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
        aac = ["-c:a", "aac", "-b:a", AUDIO_BITRATE, "-ar", "44100"]
        return _encode(frames, width, height, str(fps), audio, Path(tmp), aac)


def redraw_mp4(mp4: bytes, draw: Callable[[ImageArray], ImageArray]) -> bytes:
    """``mp4`` encoded again (as :func:`encode_mp4` does) with every frame passed through
    ``draw`` (an RGB ``uint8`` frame in, one of the same size out); its audio, if any, is
    copied as it is."""
    with tempfile.TemporaryDirectory(prefix="pixelmill-video-") as tmp:
        source = Path(tmp) / "source.mp4"
        source.write_bytes(mp4)
        reader = importlib.import_module("imageio_ffmpeg").read_frames(str(source))
        try:
            meta = next(reader)
            width, height = (int(v) for v in meta["size"])
            fps = float(meta["fps"]) or 25.0
            frames = (
                draw(np.frombuffer(raw, np.uint8).reshape(height, width, 3)) for raw in reader
            )
            return _encode(frames, width, height, f"{fps:g}", source, Path(tmp), ["-c:a", "copy"])
        except (StopIteration, KeyError, ValueError, OSError, RuntimeError) as exc:
            raise EncodeError(f"the video could not be read: {exc}") from exc
        finally:
            reader.close()


def _encode(
    frames: Iterable[ImageArray],
    width: int,
    height: int,
    fps: str,
    audio: Path,
    tmp: Path,
    audio_args: list[str],
) -> bytes:
    """H.264 of the raw ``frames`` piped to ffmpeg and the first audio stream of ``audio``
    (none if it has none), encoded as ``audio_args`` say."""
    out = tmp / "video.mp4"
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
        fps,
        "-i",
        "pipe:0",
        "-i",
        str(audio),
        "-map",
        "0:v:0",
        "-map",
        "1:a:0?",
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
        *audio_args,
        "-movflags",
        "+faststart",
        str(out),
    ]
    log = tmp / "ffmpeg.log"
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
