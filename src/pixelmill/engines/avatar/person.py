"""Finding the person in a reference photo and cutting them out.

Detection (:func:`find_person`) is the cheap part and runs before anything is charged: MediaPipe
pose (33 landmarks, with its person segmentation) and face detection, both from the models the
``mediapipe`` 0.10.21 wheel carries. A photo counts as showing a person when the face detector
finds a face or pose sees at least :data:`MIN_POSE_POINTS` landmarks, one of them on the head
or shoulders. The selfie-segmentation model is *not* a detector: it paints a "person" over
cats and coffee cups alike (measured: 0.91 and 0.23 of the frame), so it only shapes the mask.

The cut-out (:func:`cut_out`) fuses the MediaPipe person masks (selfie segmentation and pose
segmentation: a person prior that ignores props and backgrounds) with the U²-Net-p salient mask
(sharper object edges), snaps the result to the photo's edges with a guided filter, and keeps
the connected regions that matter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import EngineError, ImageArray
from pixelmill.engines.runtime import mediapipe as mp
from pixelmill.engines.runtime.faces import FaceBox, detect_faces
from pixelmill.engines.runtime.segmentation import mask_to_alpha, salient_mask, snap_to_edges

Mask = npt.NDArray[np.float32]
Framing = Literal["full", "half", "head"]

MIN_POSE_POINTS = 5
"""Visible pose landmarks needed to call something a person without a face."""
VISIBLE = 0.5
"""MediaPipe visibility at or above which a landmark counts as seen."""
MAX_WORK_SIDE = 1600
"""Photos are analysed at most this large (long side); the cut-out is made at this size."""

_POSE_INDEX = {
    "nose": 0, "left_shoulder": 11, "right_shoulder": 12, "left_elbow": 13, "right_elbow": 14,
    "left_wrist": 15, "right_wrist": 16, "left_hip": 23, "right_hip": 24, "left_knee": 25,
    "right_knee": 26, "left_ankle": 27, "right_ankle": 28,
}  # fmt: skip
"""MediaPipe pose landmark indices of the landmarks the avatar engines report."""


SELFIE = mp.SELFIE
POSE = mp.POSE_WITH_MASK


def load() -> None:
    """Build both graphs now (idempotent)."""
    SELFIE.load()
    POSE.load()


@dataclass(frozen=True)
class Person:
    """What :func:`find_person` saw in the (possibly downscaled) working image ``rgb``:
    visible landmarks in its pixels, the MediaPipe person prior, the best face, the framings
    the photo supports (widest first) and the person's box in the prior."""

    rgb: ImageArray
    landmarks: dict[str, tuple[float, float]]
    prior: Mask
    face: FaceBox | None
    framings: tuple[Framing, ...]
    box: tuple[int, int, int, int]
    scale: float


def working_copy(image: ImageArray) -> tuple[ImageArray, float]:
    """The RGB image at most :data:`MAX_WORK_SIDE` on its long side, and the factor applied.
    An RGBA image is first composited onto white (a cut-out's transparent pixels hold no
    meaningful colour)."""
    if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
        raise EngineError(f"expected an 8-bit RGB or RGBA image, got {image.dtype} {image.shape}")
    rgb = image[..., :3]
    if image.shape[2] == 4:
        a = image[..., 3:].astype(np.float32) / 255.0
        rgb = np.round(rgb * a + 255.0 * (1.0 - a)).astype(np.uint8)
    h, w = rgb.shape[:2]
    k = min(1.0, MAX_WORK_SIDE / max(h, w))
    if k < 1.0:
        small = cv2.resize(rgb, (round(w * k), round(h * k)), interpolation=cv2.INTER_AREA)
        return np.ascontiguousarray(small, dtype=np.uint8), k
    return np.ascontiguousarray(rgb, dtype=np.uint8), k


def find_person(image: ImageArray) -> Person:
    """The person in ``image``; raises :class:`EngineError` when there is none."""
    rgb, k = working_copy(image)
    h, w = rgb.shape[:2]
    if min(h, w) < 32:
        raise EngineError("no person found in the reference image")
    faces = detect_faces(rgb)
    result = POSE.process(rgb)
    landmarks: dict[str, tuple[float, float]] = {}
    seen = 0
    if result.pose_landmarks is not None:
        points = result.pose_landmarks.landmark
        seen = sum(1 for p in points if p.visibility >= VISIBLE and 0 <= p.x <= 1 and 0 <= p.y <= 1)
        for name, index in _POSE_INDEX.items():
            p = points[index]
            if p.visibility >= VISIBLE and 0.0 <= p.x <= 1.0 and 0.0 <= p.y <= 1.0:
                landmarks[name] = (float(p.x * w), float(p.y * h))
    upper = any(n in landmarks for n in ("nose", "left_shoulder", "right_shoulder"))
    if not faces and not (seen >= MIN_POSE_POINTS and upper):
        raise EngineError("no person found in the reference image")
    selfie = np.asarray(SELFIE.process(rgb).segmentation_mask, dtype=np.float32)
    prior = selfie
    if result.segmentation_mask is not None:
        prior = np.maximum(prior, np.asarray(result.segmentation_mask, dtype=np.float32))
    face = faces[0] if faces else None
    box = _person_box(prior, landmarks, face)
    if box is None:
        raise EngineError("no person found in the reference image")
    return Person(rgb, landmarks, prior, face, _framings(landmarks, box, h), box, k)


def _person_box(
    prior: Mask, landmarks: dict[str, tuple[float, float]], face: FaceBox | None
) -> tuple[int, int, int, int] | None:
    """The box of the prior's region that holds the person's face or landmarks."""
    binary = (prior > 0.5).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
    if count <= 1:
        return None
    anchors = list(landmarks.values())
    if face is not None:
        anchors.append((face.x + face.w / 2, face.y + face.h / 2))
    h, w = prior.shape
    hits = {
        int(labels[min(h - 1, max(0, round(y))), min(w - 1, max(0, round(x)))]) for x, y in anchors
    } - {0}
    if not hits:
        hits = {1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))}
    boxes = stats[sorted(hits)]
    x0 = int(boxes[:, cv2.CC_STAT_LEFT].min())
    y0 = int(boxes[:, cv2.CC_STAT_TOP].min())
    x1 = int((boxes[:, cv2.CC_STAT_LEFT] + boxes[:, cv2.CC_STAT_WIDTH]).max())
    y1 = int((boxes[:, cv2.CC_STAT_TOP] + boxes[:, cv2.CC_STAT_HEIGHT]).max())
    return x0, y0, x1 - x0, y1 - y0


def _framings(
    landmarks: dict[str, tuple[float, float]], box: tuple[int, int, int, int], height: int
) -> tuple[Framing, ...]:
    """The framings a photo supports, widest first: full body when an ankle is seen; half
    body when the hips are seen or the photo runs well below the shoulders (at least the
    head-to-shoulder distance again); head and shoulders always."""
    if "left_ankle" in landmarks or "right_ankle" in landmarks:
        return ("full", "half", "head")
    shoulders = [landmarks[k][1] for k in ("left_shoulder", "right_shoulder") if k in landmarks]
    hips = "left_hip" in landmarks or "right_hip" in landmarks
    if shoulders:
        shoulder_y = sum(shoulders) / len(shoulders)
        if hips or height - shoulder_y >= 0.9 * (shoulder_y - box[1]):
            return ("half", "head")
    return ("head",)


def cut_out(person: Person) -> Mask:
    """The person's alpha matte (``(H, W)`` float32 0..1) on the working image: the MediaPipe
    prior and the U²-Net-p mask averaged where the person can be, snapped to the photo's
    edges, then only the regions connected to the person kept."""
    rgb, prior = person.rgb, person.prior
    h, w = prior.shape
    reach = max(3, round(0.03 * max(h, w)))
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * reach + 1, 2 * reach + 1))
    where = cv2.dilate((prior > 0.3).astype(np.uint8), kernel) > 0
    salient = salient_mask(rgb)
    fused = np.where(where, 0.5 * prior + 0.5 * salient, 0.0).astype(np.float32)
    alpha = mask_to_alpha(snap_to_edges(rgb, fused))
    return _keep_person(alpha, person)


def _keep_person(alpha: Mask, person: Person) -> Mask:
    """Drop specks: keep the regions holding a landmark or the face, and any region at least
    a tenth the size of the largest of those."""
    binary = (alpha > 0.5).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
    if count <= 2:
        return alpha
    h, w = alpha.shape
    anchors = list(person.landmarks.values())
    if person.face is not None:
        f = person.face
        anchors.append((f.x + f.w / 2, f.y + f.h / 2))
    hits = {
        int(labels[min(h - 1, max(0, round(y))), min(w - 1, max(0, round(x)))]) for x, y in anchors
    } - {0}
    areas = stats[:, cv2.CC_STAT_AREA]
    if not hits:
        hits = {1 + int(np.argmax(areas[1:]))}
    largest = max(int(areas[i]) for i in hits)
    keep = np.zeros(count, dtype=bool)
    for i in range(1, count):
        keep[i] = i in hits or areas[i] >= largest / 10
    region = keep[labels]
    # Soft edges lie just outside the binary regions: keep alpha near a kept region.
    near = cv2.dilate(region.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    return np.where(near, alpha, 0.0).astype(np.float32)
