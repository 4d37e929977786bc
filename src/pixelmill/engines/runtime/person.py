"""The one person finder, shared by the engines that work on a photo or drawing of a person
(reference avatars, product photos, try-on): the working copy, MediaPipe pose landmarks and the
"is there a person" rule, the MediaPipe person masks, and keeping the matte's regions that
belong to the person. What differs between callers is a parameter, not a copy:
:func:`keep_person`'s ``max_ratio`` (how small a detached region may be and still be kept).

A photo counts as showing a person when pose sees at least :data:`MIN_POSE_POINTS` landmarks at
:data:`VISIBLE` or more, one of them on the head or shoulders (:attr:`Sighting.is_person`), or
the face detector finds a face. The selfie-segmentation model is *not* a detector: it paints a
"person" over cats and coffee cups alike, so it only shapes masks.

The graphs are the runtime's (:mod:`~pixelmill.engines.runtime.mediapipe`): the pose graph with
its person mask and selfie segmentation, from the models the ``mediapipe`` 0.10.21 wheel carries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import EngineError, ImageArray
from pixelmill.engines.runtime import mediapipe as mp
from pixelmill.engines.runtime.faces import FaceBox

Mask = npt.NDArray[np.float32]
Point = tuple[float, float]

POSE_INDEX: dict[str, int] = {
    "nose": 0, "left_shoulder": 11, "right_shoulder": 12, "left_elbow": 13, "right_elbow": 14,
    "left_wrist": 15, "right_wrist": 16, "left_hip": 23, "right_hip": 24, "left_knee": 25,
    "right_knee": 26, "left_ankle": 27, "right_ankle": 28,
}  # fmt: skip
"""The landmarks the avatar engines report, with their MediaPipe pose indices (the subject's
left/right: ``left_shoulder`` is on the image's right for a person facing the viewer)."""

MIN_POSE_POINTS = 5
"""Visible pose landmarks needed to call something a person without a face."""
VISIBLE = 0.5
"""MediaPipe visibility at or above which a landmark counts as seen."""
MAX_WORK_SIDE = 1600
"""Photos are analysed (and cut out) at most this large (long side)."""
UPPER = ("nose", "left_shoulder", "right_shoulder")


def load() -> None:
    """Build the pose and selfie graphs now (idempotent)."""
    mp.POSE.load()
    mp.SELFIE.load()


def working_copy(image: ImageArray) -> tuple[ImageArray, float]:
    """The RGB image at most :data:`MAX_WORK_SIDE` on its long side, and the factor applied.
    An RGBA image is first composited onto white (a cut-out's transparent pixels hold no
    meaningful colour)."""
    if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
        raise EngineError(f"expected an 8-bit RGB or RGBA image, got {image.dtype} {image.shape}")
    rgb = image
    if image.shape[2] == 4:
        a = image[..., 3:4].astype(np.float32) / 255.0
        rgb = np.asarray(image[..., :3] * a + 255.0 * (1.0 - a) + 0.5, dtype=np.uint8)
    h, w = rgb.shape[:2]
    k = min(1.0, MAX_WORK_SIDE / max(h, w))
    if k < 1.0:
        rgb = np.asarray(
            cv2.resize(rgb, (round(w * k), round(h * k)), interpolation=cv2.INTER_AREA), np.uint8
        )
    return np.ascontiguousarray(rgb, dtype=np.uint8), k


def pose_landmarks(result: Any, shape: tuple[int, int]) -> tuple[dict[str, Point], int]:
    """The :data:`POSE_INDEX` landmarks a pose result sees inside the image (in pixels of an
    image of ``shape``), and how many of all its landmarks are visible there."""
    h, w = shape
    if result.pose_landmarks is None:
        return {}, 0
    points = result.pose_landmarks.landmark
    seen = sum(1 for p in points if p.visibility >= VISIBLE and 0 <= p.x <= 1 and 0 <= p.y <= 1)
    found: dict[str, Point] = {}
    for name, index in POSE_INDEX.items():
        p = points[index]
        if p.visibility >= VISIBLE and 0.0 <= p.x <= 1.0 and 0.0 <= p.y <= 1.0:
            found[name] = (float(p.x * w), float(p.y * h))
    return found, seen


@dataclass(frozen=True)
class Sighting:
    """What the pose graph saw on the working image ``rgb`` (``scale`` × the input): the
    landmarks in its pixels, how many landmarks in all, and the pose graph's person mask."""

    rgb: ImageArray
    scale: float
    landmarks: dict[str, Point]
    seen: int
    pose_mask: Mask | None

    @property
    def is_person(self) -> bool:
        """Whether pose alone calls this a person (enough landmarks, one on head or shoulders)."""
        return self.seen >= MIN_POSE_POINTS and any(n in self.landmarks for n in UPPER)

    def selfie_mask(self) -> Mask:
        """Selfie segmentation's soft person mask on the working image."""
        return np.asarray(mp.SELFIE.process(self.rgb).segmentation_mask, dtype=np.float32)


def sight(image: ImageArray, no_person: str) -> Sighting:
    """Run pose on ``image``'s working copy; an image under 32 pixels is refused with
    :class:`EngineError` (``no_person``)."""
    rgb, k = working_copy(image)
    h, w = rgb.shape[:2]
    if min(h, w) < 32:
        raise EngineError(no_person)
    result = mp.POSE.process(rgb)
    landmarks, seen = pose_landmarks(result, (h, w))
    mask = result.segmentation_mask
    pose_mask = None if mask is None else np.asarray(mask, dtype=np.float32)
    return Sighting(rgb, k, landmarks, seen, pose_mask)


def _hit_labels(labels: npt.NDArray[Any], anchors: Iterable[Point]) -> set[int]:
    h, w = labels.shape
    return {
        int(labels[min(h - 1, max(0, round(y))), min(w - 1, max(0, round(x)))]) for x, y in anchors
    } - {0}


def region_box(prior: Mask, anchors: Iterable[Point]) -> tuple[int, int, int, int] | None:
    """The box ``(x, y, w, h)`` of the prior's regions (alpha > 0.5) that hold an anchor (a
    landmark, a face centre), or of its largest region when none does."""
    binary = (prior > 0.5).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
    if count <= 1:
        return None
    hits = _hit_labels(labels, anchors)
    if not hits:
        hits = {1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))}
    boxes = stats[sorted(hits)]
    x0 = int(boxes[:, cv2.CC_STAT_LEFT].min())
    y0 = int(boxes[:, cv2.CC_STAT_TOP].min())
    x1 = int((boxes[:, cv2.CC_STAT_LEFT] + boxes[:, cv2.CC_STAT_WIDTH]).max())
    y1 = int((boxes[:, cv2.CC_STAT_TOP] + boxes[:, cv2.CC_STAT_HEIGHT]).max())
    return x0, y0, x1 - x0, y1 - y0


def keep_person(alpha: Mask, anchors: Iterable[Point], max_ratio: float) -> Mask:
    """Drop specks from a person matte: keep the regions holding an anchor (a landmark, a face
    centre), and any region at most ``max_ratio`` times smaller than the largest of those (the
    reference avatar uses 10: a photo's stray background goes; the product photo 400: a drawn
    avatar's detached hands and shoes stay). Soft edges just outside a kept region stay."""
    binary = (alpha > 0.5).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
    if count <= 2:
        return alpha
    hits = _hit_labels(labels, anchors)
    areas = stats[:, cv2.CC_STAT_AREA]
    if not hits:
        hits = {1 + int(np.argmax(areas[1:]))}
    largest = max(int(areas[i]) for i in hits)
    keep = np.zeros(count, dtype=bool)
    for i in range(1, count):
        keep[i] = i in hits or areas[i] >= largest / max_ratio
    near = cv2.dilate(keep[labels].astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    return np.where(near, alpha, 0.0).astype(np.float32)


def anchors(landmarks: Mapping[str, Point], face: FaceBox | None = None) -> list[Point]:
    """The landmarks, plus the centre of ``face`` (a box with ``x, y, w, h``) when given."""
    out = list(landmarks.values())
    if face is not None:
        out.append((face.x + face.w / 2, face.y + face.h / 2))
    return out
