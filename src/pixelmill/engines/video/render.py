"""A short video from one still image and a voice track.

With a face big enough to animate, the face talks (``face``): jaw and lips follow the speech
envelope, the eyes blink, the head sways, and the camera pushes in slowly. Without one (a
product photo), the camera moves: a push-in, a pan or a rise, with parallax between the
U²-Net-p cut-out of the subject and the rest of the picture. The image is always shown whole
(``canvas.fit``); the only pixels not in the input are the blurred fill around it and, during
parallax, a thin band behind the subject's edge filled from the surrounding background.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.mediapipe import Graph
from pixelmill.engines.runtime.segmentation import main_object_box, mask_to_alpha, salient_mask
from pixelmill.engines.speech import Speech
from pixelmill.engines.video import face as face_mod
from pixelmill.engines.video.canvas import ASPECTS, Fitted, fit
from pixelmill.engines.video.encode import encode_mp4
from pixelmill.engines.video.subtitles import Subtitles

FPS = 25
F32 = npt.NDArray[np.float32]

FACE_METHOD = (
    "talking photo: MediaPipe face-mesh landmarks; jaw drop and lip gap driven by the speech "
    "envelope (a mouth warp driven by the speech envelope; not a generative lip-sync model), "
    "eyelid blinks, gentle head sway, slow push-in"
)
PRODUCT_METHOD = (
    "camera move on the still image ({move}) with parallax between the U2-Net-p cut-out and "
    "its background; no generated content"
)
FLAT_METHOD = "camera move on the still image ({move}); no subject cut-out, no generated content"


@dataclass
class RenderStats:
    frames: int = 0
    render_s: float = 0.0
    encode_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def envelope(speech: Speech, fps: int = FPS) -> F32:
    """Mouth opening 0..1 per video frame, from the speech's loudness: RMS over a 50 ms window
    at each frame, in dB relative to the loudest frame, mapped onto 0..1 and smoothed with a
    fast attack and a slower release; silent outside spoken words."""
    rate = speech.sample_rate
    audio = speech.pcm.astype(np.float32) / 32768.0
    n = max(1, math.ceil(speech.duration * fps))
    half = int(0.025 * rate)
    rms = np.zeros(n, dtype=np.float32)
    for i in range(n):
        c = int((i + 0.5) / fps * rate)
        seg = audio[max(0, c - half) : c + half]
        rms[i] = float(np.sqrt(np.mean(seg * seg))) if seg.size else 0.0
    db = 20 * np.log10(np.maximum(rms, 1e-5))
    top = float(np.percentile(db, 95)) if n > 2 else float(db.max())
    raw = np.clip((db - (top - 26.0)) / 22.0, 0.0, 1.0)
    speaking = np.zeros(n, dtype=bool)
    for w in speech.words:
        speaking[int(w.start * fps) : math.ceil(w.end * fps) + 1] = True
    raw = np.where(speaking, raw, 0.0)
    out = np.zeros(n, dtype=np.float32)
    level = 0.0
    for i, v in enumerate(raw):
        k = 0.75 if v > level else 0.45
        level += k * (float(v) - level)
        out[i] = level
    return out


def _blinks(n: int, rng: random.Random, fps: int = FPS) -> F32:
    closure = np.zeros(n, dtype=np.float32)
    t = rng.uniform(0.6, 1.8)
    shape = (0.45, 1.0, 1.0, 0.6, 0.25)
    while t * fps < n:
        start = int(t * fps)
        for k, v in enumerate(shape):
            if start + k < n:
                closure[start + k] = v
        t += rng.uniform(2.6, 4.8)
    return closure


def _ease(t: float) -> float:
    t = min(1.0, max(0.0, t))
    return t * t * (3 - 2 * t)


def _camera(
    frame: ImageArray, zoom: float, center: tuple[float, float], shift: tuple[float, float]
) -> ImageArray:
    """Zoom about ``center`` then move by ``shift`` pixels (border reflected, never black)."""
    h, w = frame.shape[:2]
    m = _zoom_matrix(zoom, center, shift)
    return np.asarray(
        cv2.warpAffine(frame, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT),
        dtype=np.uint8,
    )


def _zoom_matrix(
    zoom: float, center: tuple[float, float], shift: tuple[float, float]
) -> npt.NDArray[np.float64]:
    cx, cy = center
    return np.asarray(
        [[zoom, 0, (1 - zoom) * cx + shift[0]], [0, zoom, (1 - zoom) * cy + shift[1]]],
        dtype=np.float64,
    )


def _face_frames(
    fitted: Fitted, marks: face_mod.Landmarks, opening: F32, rng: random.Random, stats: RenderStats
) -> Iterator[ImageArray]:
    base = fitted.canvas
    h, w = base.shape[:2]
    rig = face_mod.build_rig(base, marks)
    n = len(opening)
    blink = _blinks(n, rng)
    phase = rng.uniform(0, 2 * math.pi)
    face_c = marks.p(face_mod.NOSE_BASE)
    amp = 0.012 * marks.width
    for i in range(n):
        t = i / FPS
        angle = 1.1 * math.sin(2 * math.pi * t / 4.3 + phase) + 0.4 * math.sin(
            2 * math.pi * t / 1.9
        )
        shift = (
            amp * math.sin(2 * math.pi * t / 5.1 + phase),
            amp * 0.5 * math.sin(2 * math.pi * t / 3.7),
        )
        frame = face_mod.animate(base, rig, float(opening[i]), float(blink[i]), angle, shift)
        zoom = 1.0 + 0.045 * _ease(t / max(n / FPS, 1e-3))
        yield _camera(frame, zoom, face_c, (0.0, 0.0))
    stats.extra["face_roi"] = list(rig.roi)
    del h, w


def _fill_behind(canvas: ImageArray, alpha: F32) -> ImageArray:
    """The picture with the subject's area filled from its surroundings (normalised
    convolution at quarter size): what parallax reveals behind the subject's edge."""
    h, w = canvas.shape[:2]
    sw, sh = max(8, w // 4), max(8, h // 4)
    small = cv2.resize(canvas, (sw, sh), interpolation=cv2.INTER_AREA).astype(np.float32)
    hole = cv2.resize(alpha, (sw, sh), interpolation=cv2.INTER_AREA)
    hole = cv2.dilate((hole > 0.05).astype(np.float32), np.ones((5, 5), np.uint8))
    keep = 1.0 - hole
    sigma = 0.05 * max(sw, sh)
    num = cv2.GaussianBlur(small * keep[..., None], (0, 0), sigma)
    den = cv2.GaussianBlur(keep, (0, 0), sigma)[..., None]
    filled = num / np.maximum(den, 1e-3)
    filled = np.where(den > 1e-3, filled, small)
    big = cv2.resize(filled, (w, h), interpolation=cv2.INTER_LINEAR)
    hole_big = cv2.resize(hole, (w, h), interpolation=cv2.INTER_LINEAR)[..., None]
    out = canvas.astype(np.float32) * (1 - hole_big) + big * hole_big
    return np.ascontiguousarray(out.clip(0, 255).astype(np.uint8))


MOVES = ("push-in", "pan", "rise")


def _product_frames(
    fitted: Fitted, rgb: ImageArray, n: int, move: str, stats: RenderStats
) -> Iterator[ImageArray]:
    base = fitted.canvas
    h, w = base.shape[:2]
    mask = mask_to_alpha(salient_mask(rgb))
    box = main_object_box(mask)
    coverage = float(mask.mean())
    layered = box is not None and 0.02 < coverage < 0.8
    stats.extra["cutout_coverage"] = round(coverage, 3)
    stats.extra["parallax"] = layered
    ox, oy = fitted.offset
    pw, ph = fitted.size
    alpha = np.zeros((h, w), dtype=np.float32)
    alpha[oy : oy + ph, ox : ox + pw] = cv2.resize(mask, (pw, ph), interpolation=cv2.INTER_LINEAR)
    if box is not None:
        bx, by, bw, bh = box
        center = fitted.to_canvas(bx + bw / 2, by + bh / 2)
    else:
        center = (w / 2, h / 2)
    back = _fill_behind(base, alpha) if layered else base
    a3 = alpha[..., None]
    travel = 0.035 * w
    for i in range(n):
        e = _ease(i / max(n - 1, 1))
        if move == "pan":
            fg = (1.06, (travel * (0.5 - e) * 1.6, 0.0))
            bg = (1.06, (travel * (0.5 - e) * 0.7, 0.0))
        elif move == "rise":
            fg = (1.04 + 0.06 * e, (0.0, travel * (0.5 - e) * 1.2))
            bg = (1.04 + 0.025 * e, (0.0, travel * (0.5 - e) * 0.5))
        else:  # push-in
            fg = (1.0 + 0.12 * e, (0.0, 0.0))
            bg = (1.0 + 0.05 * e, (0.0, 0.0))
        if not layered:
            yield _camera(base, fg[0], center, fg[1])
            continue
        b = _camera(back, bg[0], center, bg[1]).astype(np.float32)
        f = _camera(base, fg[0], center, fg[1]).astype(np.float32)
        m = _camera_mask(a3, fg[0], center, fg[1])
        yield np.ascontiguousarray((f * m + b * (1 - m)).astype(np.uint8))


def _camera_mask(
    alpha: F32, zoom: float, center: tuple[float, float], shift: tuple[float, float]
) -> F32:
    h, w = alpha.shape[:2]
    m = _zoom_matrix(zoom, center, shift)
    out = cv2.warpAffine(
        alpha[..., 0], m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT
    )
    return np.asarray(out, dtype=np.float32)[..., None]


@dataclass(frozen=True)
class Video:
    data: bytes
    width: int
    height: int
    fps: int
    frames: int
    duration: float
    mode: str
    method: str
    stats: dict[str, Any]


def render(
    image: ImageArray,
    speech: Speech,
    *,
    face_mesh: Graph | None,
    aspect: str = "9:16",
    subtitles: bool = False,
    seed: int = 0,
) -> Video:
    """The MP4 for ``image`` (RGB or RGBA uint8) speaking ``speech``; a face found by
    ``face_mesh`` talks (``None``: a camera move whatever the image shows)."""
    if aspect not in ASPECTS:
        raise ValueError(f"aspect must be one of {', '.join(ASPECTS)}")
    started = time.perf_counter()
    rgb = np.ascontiguousarray(image[..., :3])
    width, height = ASPECTS[aspect]
    fitted = fit(rgb, width, height)
    rng = random.Random(seed)
    stats = RenderStats()
    opening = envelope(speech)
    n = len(opening)
    marks = face_mod.find_face(rgb, face_mesh) if face_mesh is not None else None
    if marks is not None:
        mode = "face"
        method = FACE_METHOD
        frames = _face_frames(fitted, marks.moved(fitted.scale, fitted.offset), opening, rng, stats)
    else:
        move = MOVES[seed % len(MOVES)]
        mode = "product"
        frames = _product_frames(fitted, rgb, n, move, stats)
        method = PRODUCT_METHOD.format(move=move)
        stats.extra["move"] = move
    subs = Subtitles(speech.words, width, height) if subtitles else None
    prepared = time.perf_counter()
    render_time = [0.0]

    def timed() -> Iterator[ImageArray]:
        i = 0
        t0 = time.perf_counter()
        for frame in frames:
            if subs is not None:
                subs.draw(frame, i / FPS)
            render_time[0] += time.perf_counter() - t0
            yield frame
            i += 1
            t0 = time.perf_counter()
        stats.frames = i

    data = encode_mp4(timed(), width, height, FPS, speech.wav_bytes())
    done = time.perf_counter()
    if marks is None and not stats.extra.get("parallax", False):
        method = FLAT_METHOD.format(move=stats.extra.get("move", "push-in"))
    return Video(
        data=data,
        width=width,
        height=height,
        fps=FPS,
        frames=stats.frames,
        duration=stats.frames / FPS,
        mode=mode,
        method=method,
        stats={
            "prepare_s": round(prepared - started, 3),
            "render_s": round(render_time[0], 3),
            "encode_s": round(done - prepared - render_time[0], 3),
            **stats.extra,
        },
    )
