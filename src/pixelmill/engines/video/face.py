"""A talking face from one still photo: MediaPipe face-mesh landmarks (model from the
``mediapipe`` wheel), then per frame one ``cv2.remap`` of the head region that

* drops the jaw by an amount that follows the speech envelope (the lower lip, chin and jaw
  move down; the upper lip lifts a little), and paints the gap that opens between the lips as
  a dark mouth interior with a faint upper-teeth band;
* closes the eyelids for a blink every few seconds (the lid skin is stretched down over the
  eye);
* sways the head gently (a small rotation about the neck, fading out around the head).

This is a warp of the existing pixels driven by the audio's loudness, not a generative
lip-sync model: mouth shapes do not follow individual phonemes, teeth and tongue are not
drawn from the person, and a head turned far from the camera is animated poorly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime import faces
from pixelmill.engines.runtime.mediapipe import Graph

F32 = npt.NDArray[np.float32]

UPPER_INNER = (78, 191, 80, 81, 82, 13, 312, 311, 310, 415, 308)
LOWER_INNER = (78, 95, 88, 178, 87, 14, 317, 402, 318, 324, 308)
OUTER_LIPS = (
    61,
    185,
    40,
    39,
    37,
    0,
    267,
    269,
    270,
    409,
    291,
    375,
    321,
    405,
    314,
    17,
    84,
    181,
    91,
    146,
)
MOUTH_LEFT, MOUTH_RIGHT = 61, 291
UPPER_OUTER, LOWER_OUTER = 0, 17
CHIN, FOREHEAD, NOSE_BASE = 152, 10, 2
CHEEK_LEFT, CHEEK_RIGHT = 234, 454
JAW_LEFT, JAW_RIGHT = 172, 397
# (outer corner, inner corner, upper lid, lower lid, brow) for each eye
EYES = ((33, 133, 159, 145, 105), (263, 362, 386, 374, 334))

MIN_FACE_FRACTION = 0.06
"""Faces narrower than this share of the image's short side are too small to animate."""
MOUTH_OPEN = 0.13
"""Largest jaw drop, as a share of the mouth's width."""


def _build_mesh() -> Any:
    from mediapipe.python.solutions import face_mesh

    return face_mesh.FaceMesh(
        static_image_mode=True,
        max_num_faces=1,
        refine_landmarks=False,
        min_detection_confidence=0.5,
    )


def face_mesh() -> Graph:
    """A MediaPipe face-mesh graph, built on its first use (the video engine holds one)."""
    return Graph(_build_mesh)


@dataclass(frozen=True)
class Landmarks:
    """468 face-mesh points in pixels of the image they were found on."""

    points: F32

    def p(self, i: int) -> tuple[float, float]:
        return float(self.points[i, 0]), float(self.points[i, 1])

    @property
    def width(self) -> float:
        return float(np.linalg.norm(self.points[CHEEK_RIGHT] - self.points[CHEEK_LEFT]))

    def moved(self, scale: float, offset: tuple[int, int]) -> Landmarks:
        pts = self.points * scale + np.asarray(offset, dtype=np.float32)
        return Landmarks(pts.astype(np.float32))


def _mesh(rgb: ImageArray, mesh: Graph) -> F32 | None:
    """Face-mesh points (pixels of ``rgb``) of the most prominent face, or None."""
    h, w = rgb.shape[:2]
    result = mesh.process(np.ascontiguousarray(rgb))
    faces = getattr(result, "multi_face_landmarks", None)
    if not faces:
        return None
    return np.asarray([(lm.x * w, lm.y * h) for lm in faces[0].landmark], dtype=np.float32)


def find_face(rgb: ImageArray, mesh: Graph) -> Landmarks | None:
    """The most prominent face's points from ``mesh`` (:func:`face_mesh`), or None (no face, or
    too small to animate). The face is found first by MediaPipe's full-range detector; the mesh
    then runs on a square crop around it (its own detector only sees faces that fill much of
    the frame)."""
    h, w = rgb.shape[:2]
    found = faces.detect_faces(rgb)
    pts: F32 | None = None
    if found:
        box = max(found, key=lambda f: f.area)
        side = 2.4 * max(box.w, box.h)
        cx, cy = box.x + box.w / 2, box.y + box.h / 2
        x0, y0 = int(max(0, cx - side / 2)), int(max(0, cy - side / 2))
        x1, y1 = int(min(w, cx + side / 2)), int(min(h, cy + side / 2))
        crop = rgb[y0:y1, x0:x1]
        scale = min(1.0, 768 / max(crop.shape[:2]))
        if scale < 1.0:
            size = (round(crop.shape[1] * scale), round(crop.shape[0] * scale))
            crop = np.asarray(cv2.resize(crop, size), dtype=np.uint8)
        local = _mesh(crop, mesh)
        if local is not None:
            pts = (local / scale + np.asarray([x0, y0], np.float32)).astype(np.float32)
    if pts is None:
        scale = min(1.0, 1280 / max(h, w))
        small = (
            np.asarray(cv2.resize(rgb, (round(w * scale), round(h * scale))), dtype=np.uint8)
            if scale < 1
            else rgb
        )
        local = _mesh(small, mesh)
        if local is None:
            return None
        pts = (local / scale).astype(np.float32)
    marks = Landmarks(pts)
    if marks.width < MIN_FACE_FRACTION * min(h, w) or marks.width < 40:
        return None
    return marks


def _smoothstep(e0: float, e1: float, x: F32) -> F32:
    t = np.clip((x - e0) / max(e1 - e0, 1e-6), 0.0, 1.0)
    return np.asarray(t * t * (3 - 2 * t), dtype=np.float32)


@dataclass
class FaceRig:
    """The static part of the per-frame warp, computed once per video."""

    roi: tuple[int, int, int, int]
    grid_x: F32
    grid_y: F32
    jaw: F32
    """Jaw-drop profile: multiply by the drop in pixels."""
    lift: F32
    """Upper-lip lift profile (negative: samples from below)."""
    seam_d: F32
    """Signed distance (rows) below the lip seam."""
    mouth_in: F32
    """1 between the mouth corners, fading out at them."""
    eyes: list[tuple[F32, float]]
    """Per eye: blink profile (multiply by closure 0..1) and the eye's open height."""
    head: F32
    """Head-sway weight."""
    pivot: tuple[float, float]
    mouth_width: float
    mouth_box: tuple[slice, slice]
    """Rows and columns of the ROI where the lip gap can appear (the only place it is drawn)."""
    cavity: npt.NDArray[np.float32]
    """Mouth-interior colour (RGB float) per ROI pixel."""
    teeth: npt.NDArray[np.float32]
    teeth_alpha: float


def build_rig(frame: ImageArray, marks: Landmarks) -> FaceRig:
    h, w = frame.shape[:2]
    pts = marks.points
    face_w = marks.width
    chin = marks.p(CHIN)
    forehead = marks.p(FOREHEAD)
    face_h = float(np.hypot(chin[0] - forehead[0], chin[1] - forehead[1]))
    cx = (pts[MOUTH_LEFT, 0] + pts[MOUTH_RIGHT, 0]) / 2
    head_c = ((forehead[0] + chin[0]) / 2, (forehead[1] + chin[1]) / 2 - 0.1 * face_h)
    rx, ry = 0.8 * face_w, 0.8 * face_h
    x0 = int(max(0, head_c[0] - 1.7 * rx))
    x1 = int(min(w, head_c[0] + 1.7 * rx))
    y0 = int(max(0, head_c[1] - 1.7 * ry))
    y1 = int(min(h, head_c[1] + 1.7 * ry))
    gx, gy = np.meshgrid(np.arange(x0, x1, dtype=np.float32), np.arange(y0, y1, dtype=np.float32))

    # the lip seam: where the lips meet (closed mouth: midway between the inner contours) or,
    # for a mouth that already shows teeth, the lower inner lip, so the lower lip and jaw drop
    # away from the teeth instead of splitting them
    upper = pts[list(UPPER_INNER)]
    lower = pts[list(LOWER_INNER)]
    mouth_w = float(abs(pts[MOUTH_RIGHT, 0] - pts[MOUTH_LEFT, 0]))
    gap0 = float(pts[14, 1] - pts[13, 1])
    already_open = gap0 > 0.08 * mouth_w
    seam = lower - np.asarray([0.0, 1.0], np.float32) if already_open else (upper + lower) / 2
    order = np.argsort(seam[:, 0])
    seam_y = np.interp(gx[0], seam[order, 0], seam[order, 1]).astype(np.float32)
    seam_d = gy - seam_y[None, :]
    seam0 = float(np.interp(cx, seam[order, 0], seam[order, 1]))
    jaw_len = max(4.0, chin[1] - seam0)

    half = mouth_w / 2
    dx = np.abs(gx - cx)
    outside = _smoothstep(0.7 * half, 1.3 * half, dx)
    mouth_in = 1.0 - _smoothstep(0.8 * half, 1.0 * half, dx)
    lens = np.clip(1.0 - (dx / (0.98 * half)) ** 2, 0.0, 1.0) ** 1.1
    below_seam = (seam_d >= 0).astype(np.float32)
    deeper = np.clip(seam_d / (0.45 * jaw_len), 0.0, 1.0)
    inner = below_seam * (lens + (1.0 - lens) * deeper)
    outer = np.clip(seam_d / (0.6 * jaw_len), 0.0, 1.0)
    jaw_half = max(half * 1.3, float(abs(pts[JAW_RIGHT, 0] - pts[JAW_LEFT, 0])) / 2)
    across = 1.0 - _smoothstep(0.75 * jaw_half, 1.25 * jaw_half, dx)
    below = 1.0 - _smoothstep(chin[1] - seam0, chin[1] - seam0 + 0.9 * jaw_len, seam_d)
    jaw = ((inner * (1.0 - outside) + outer * outside) * across * below).astype(np.float32)

    lip_h = max(2.0, seam0 - float(pts[UPPER_OUTER, 1]))
    lift_prof = np.clip(1.0 + seam_d / (1.6 * lip_h), 0.0, 1.0) * (seam_d < 0)
    lift = (-0.2 * lift_prof * (1.0 - outside) * (not already_open)).astype(np.float32)

    eyes: list[tuple[F32, float]] = []
    for outer_i, inner_i, up_i, low_i, brow_i in EYES:
        ex = (pts[outer_i, 0] + pts[inner_i, 0]) / 2
        ew = float(abs(pts[outer_i, 0] - pts[inner_i, 0]))
        yu, yl = float(pts[up_i, 1]), float(pts[low_i, 1])
        opening = max(1.0, yl - yu)
        yb = max(float(pts[brow_i, 1]) + 0.3 * (yu - float(pts[brow_i, 1])), yu - 2.2 * opening)
        k = (yl - yu) / max(1.0, yl - yb)
        across_eye = np.clip(1.0 - ((gx - ex) / (0.62 * ew)) ** 2, 0.0, 1.0) ** 0.6
        in_band = (gy >= yb) & (gy <= yl)
        prof = np.where(in_band, (gy - yb) * k, 0.0)
        tail = (gy > yl) & (gy < yl + 0.6 * opening)
        prof = np.where(tail, (yl - yb) * k * (1.0 - (gy - yl) / (0.6 * opening)), prof)
        eyes.append(((prof * across_eye).astype(np.float32), opening))

    pivot = (chin[0], chin[1] + 0.35 * face_h)
    ell = ((gx - head_c[0]) / rx) ** 2 + ((gy - head_c[1]) / ry) ** 2
    head = (1.0 - _smoothstep(1.0, 2.6, np.sqrt(ell).astype(np.float32))).astype(np.float32)

    # mouth interior: a dark, warm shade: the darkest part of a mouth that is already open,
    # else the lip colour much darkened; darkest in the middle
    lips = cv2.fillPoly(np.zeros((h, w), np.uint8), [pts[list(OUTER_LIPS)].astype(np.int32)], 1)
    lip_pixels = frame[lips > 0].astype(np.float32)
    lip_rgb = (
        np.median(lip_pixels, axis=0) if len(lip_pixels) else np.asarray([150, 80, 80], np.float32)
    )
    inside = cv2.fillPoly(
        np.zeros((h, w), np.uint8), [np.concatenate([upper, lower[::-1]]).astype(np.int32)], 1
    )
    inner_pixels = frame[inside > 0].astype(np.float32)
    if already_open and len(inner_pixels) > 20:
        luma = inner_pixels.mean(axis=1)
        dark_rgb = inner_pixels[luma <= np.percentile(luma, 15)].mean(axis=0)
        dark_rgb = np.minimum(dark_rgb, lip_rgb * 0.45)
    else:
        # a closed mouth: a deep, warm red-brown in the lips' own hue
        dark_rgb = 0.5 * lip_rgb * 0.4 + 0.5 * np.asarray([72, 24, 26], np.float32)
    depth = np.clip(1.0 - dx / max(half, 1.0), 0.0, 1.0)[..., None]
    cavity = (dark_rgb * (1 - 0.45 * depth)).astype(np.float32)
    skin = frame[
        int(max(0, chin[1] - 0.5 * jaw_len)) : int(chin[1]), int(cx - half) : int(cx + half)
    ]
    brightness = float(skin.mean()) / 255.0 if skin.size else 0.6
    teeth = np.asarray([222, 214, 204], np.float32) * min(1.0, 0.5 + 0.5 * brightness)
    if already_open:
        teeth = teeth * 0  # the photo's own teeth stay above the gap

    return FaceRig(
        roi=(x0, y0, x1, y1),
        grid_x=gx,
        grid_y=gy,
        jaw=jaw,
        lift=lift,
        seam_d=seam_d.astype(np.float32),
        mouth_in=mouth_in.astype(np.float32),
        eyes=eyes,
        head=head,
        pivot=pivot,
        mouth_width=mouth_w,
        mouth_box=(
            slice(max(0, int(seam0 - 0.6 * mouth_w) - y0), max(1, int(seam0 + 0.6 * mouth_w) - y0)),
            slice(max(0, int(cx - 0.65 * mouth_w) - x0), max(1, int(cx + 0.65 * mouth_w) - x0)),
        ),
        cavity=cavity,
        teeth=teeth,
        teeth_alpha=0.0 if already_open else 0.5,
    )


def animate(
    base: ImageArray,
    rig: FaceRig,
    opening: float,
    blink: float,
    angle: float,
    shift: tuple[float, float],
) -> ImageArray:
    """One frame: ``base`` with the mouth ``opening`` (0..1), eyelids closed by ``blink``
    (0..1) and the head turned by ``angle`` degrees and moved by ``shift`` pixels."""
    x0, y0, x1, y1 = rig.roi
    drop = opening * MOUTH_OPEN * rig.mouth_width
    dy = rig.jaw * drop + rig.lift * drop
    for prof, _ in rig.eyes:
        if blink > 0:
            dy = dy + prof * blink
    # head sway: p -> pivot + R (p - pivot) + shift, weighted; backward map subtracts it
    a = math.radians(angle)
    px, py = rig.pivot
    rx = rig.grid_x - px
    ry = rig.grid_y - py
    hx = (math.cos(a) - 1) * rx - math.sin(a) * ry + shift[0]
    hy = math.sin(a) * rx + (math.cos(a) - 1) * ry + shift[1]
    map_x = rig.grid_x - rig.head * hx
    map_y = rig.grid_y - rig.head * hy - dy
    out = base.copy()
    warped = cv2.remap(base, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    if drop > 0.6:
        # the gap between the lips: rows whose source lies across the seam
        rows, cols = rig.mouth_box
        seam_d = rig.seam_d[rows, cols]
        d = dy[rows, cols]
        src_d = seam_d - d
        across = np.where(seam_d >= 0, -src_d, src_d)
        gap = np.clip(across + 0.5, 0.0, 1.0) * rig.mouth_in[rows, cols]
        if float(gap.max()) > 0:
            # a faint band of upper teeth in the top third of the gap once it is wide enough
            teeth_w = np.clip(1.0 - seam_d / (0.35 * max(drop, 1.0)), 0.0, 1.0)
            teeth_w = teeth_w * (seam_d >= 0) * min(1.0, drop / 6.0) * rig.teeth_alpha
            cavity = rig.cavity[rows, cols]
            fill = cavity * (1 - teeth_w[..., None]) + rig.teeth * teeth_w[..., None]
            g = 0.94 * cv2.GaussianBlur(gap.astype(np.float32), (5, 5), 0)[..., None]
            part = warped[rows, cols].astype(np.float32)
            warped[rows, cols] = (part * (1 - g) + fill * g).astype(np.uint8)
    out[y0:y1, x0:x1] = warped
    return out
