"""Face, hand and person detection with the models that ship inside ``mediapipe`` 0.10.21.

The legacy ``mediapipe.python.solutions`` graphs carry their ``.tflite`` files in the wheel
(``docs/models.md``): face detection (short- and full-range), hands (palm detection + hand
landmarks) and pose (only ``model_complexity=1``: the lite and heavy pose models are *downloaded*
by mediapipe on construction, which must never happen here). OpenCV's built-in HOG people
detector complements pose, which only ever reports the single most prominent person.

Each mediapipe graph is built on first use, once per process, under a lock. A graph object is
not safe to call from several threads at once, so every ``process`` call holds that graph's own
lock; the calls are short (5–40 ms), so the serialisation costs little.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import cv2
import numpy as np

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.lazy import Lazy
from pixelmill.engines.runtime.mediapipe import POSE, Graph

Box = tuple[int, int, int, int]
"""``(x, y, w, h)`` in pixels."""


@dataclass(frozen=True)
class DetectedBox:
    """An axis-aligned detection in pixel coordinates, clipped to the image."""

    x: int
    y: int
    w: int
    h: int
    score: float

    @property
    def box(self) -> Box:
        """``(x, y, w, h)``."""
        return (self.x, self.y, self.w, self.h)

    @property
    def area(self) -> int:
        """Area in pixels."""
        return self.w * self.h


@dataclass(frozen=True)
class FaceBox(DetectedBox):
    """A detected face. ``keypoints`` are mediapipe's six points in pixels: right eye, left eye,
    nose tip, mouth centre, right ear tragion, left ear tragion (the subject's right/left)."""

    keypoints: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class HandBox(DetectedBox):
    """A detected hand; ``handedness`` is mediapipe's ``"Left"``/``"Right"`` guess."""

    handedness: str = ""


@dataclass(frozen=True)
class PersonBox(DetectedBox):
    """A detected person; ``source`` says which detector found it (pose landmarks give a
    tight body box for the most prominent person, HOG finds further upright people)."""

    source: Literal["pose", "hog"] = "pose"


def _build_face_full() -> Any:
    from mediapipe.python.solutions import face_detection

    # Full range (faces up to ~5 m away, i.e. small in the frame).
    return face_detection.FaceDetection(model_selection=1, min_detection_confidence=0.5)


def _build_face_short() -> Any:
    from mediapipe.python.solutions import face_detection

    # Short range is better on close-up selfies, where the full-range model sometimes misses.
    return face_detection.FaceDetection(model_selection=0, min_detection_confidence=0.5)


def _build_hands() -> Any:
    from mediapipe.python.solutions import hands

    return hands.Hands(
        static_image_mode=True, max_num_hands=4, model_complexity=1, min_detection_confidence=0.5
    )


def _build_hog() -> cv2.HOGDescriptor:
    hog = cv2.HOGDescriptor()
    hog.setSVMDetector(np.asarray(cv2.HOGDescriptor.getDefaultPeopleDetector(), dtype=np.float32))
    return hog


_FACE_FULL = Graph(_build_face_full)
_FACE_SHORT = Graph(_build_face_short)
_HANDS = Graph(_build_hands)
_HOG: Lazy[cv2.HOGDescriptor] = Lazy(_build_hog)

HOG_MIN_WEIGHT = 1.0
"""SVM margin below which a HOG window is dropped. The default people detector fires on
vertical textures at margins around 0.5–0.8 (e.g. inside the astronaut's suit); real upright
people usually score above 1."""

HOG_MAX_SIDE = 640
"""HOG runs on a copy no larger than this (about 75 ms at 640²); people smaller than the
64×128 window at that scale are missed."""


def load() -> None:
    """Build every detector now (idempotent, thread-safe); otherwise each is built on first use."""
    for graph in (_FACE_FULL, _FACE_SHORT, _HANDS, POSE):
        graph.load()
    _HOG.load()


def _as_rgb(image: ImageArray) -> ImageArray:
    if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
        raise ValueError(f"expected a uint8 RGB or RGBA image, got {image.dtype} {image.shape}")
    return np.ascontiguousarray(image[..., :3])


def _clip_box(x0: float, y0: float, x1: float, y1: float, w: int, h: int) -> Box | None:
    """Round and clip a corner box to the image; ``None`` if nothing is left."""
    xa, ya = max(0, round(x0)), max(0, round(y0))
    xb, yb = min(w, round(x1)), min(h, round(y1))
    if xb - xa < 2 or yb - ya < 2:
        return None
    return (xa, ya, xb - xa, yb - ya)


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two ``(x, y, w, h)`` boxes."""
    ix = max(0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


_D = TypeVar("_D", bound=DetectedBox)


def non_max_suppression(boxes: Sequence[_D], threshold: float = 0.3) -> list[_D]:
    """Keep the highest-scoring box of every group overlapping by more than ``threshold`` IoU."""
    kept: list[_D] = []
    for cand in sorted(boxes, key=lambda b: -b.score):
        if all(iou(cand.box, k.box) <= threshold for k in kept):
            kept.append(cand)
    return kept


def _faces_from(result: Any, w: int, h: int) -> list[FaceBox]:
    faces: list[FaceBox] = []
    for det in result.detections or []:
        rel = det.location_data.relative_bounding_box
        clipped = _clip_box(
            rel.xmin * w,
            rel.ymin * h,
            (rel.xmin + rel.width) * w,
            (rel.ymin + rel.height) * h,
            w,
            h,
        )
        if clipped is None:
            continue
        kps = tuple(
            (round(kp.x * w), round(kp.y * h)) for kp in det.location_data.relative_keypoints
        )
        faces.append(FaceBox(*clipped, score=float(det.score[0]), keypoints=kps))
    return faces


FACE_MIN_SCORE = 0.6
"""Faces scoring below this are dropped. Real faces in the test photos score 0.85–0.95; a
contrast-reduced cat scored 0.50."""


def detect_faces(image: ImageArray, min_score: float = FACE_MIN_SCORE) -> list[FaceBox]:
    """Faces in an RGB(A) image, best first.

    Both mediapipe face models run (about 5 ms each) and their boxes are merged by
    non-maximum suppression: the full-range model finds small faces, the short-range one is
    more reliable on close-ups. Works on greyscale content given as RGB."""
    rgb = _as_rgb(image)
    h, w = rgb.shape[:2]
    found = _faces_from(_FACE_FULL.process(rgb), w, h) + _faces_from(_FACE_SHORT.process(rgb), w, h)
    return non_max_suppression([f for f in found if f.score >= min_score], 0.3)


def detect_hands(image: ImageArray) -> list[HandBox]:
    """Hands (up to four) in an RGB(A) image, best first. The box spans the 21 hand landmarks
    plus 10 % padding; ``score`` is mediapipe's handedness confidence, which is also its
    is-a-hand confidence in the legacy graph."""
    rgb = _as_rgb(image)
    h, w = rgb.shape[:2]
    result = _HANDS.process(rgb)
    hands: list[HandBox] = []
    landmarks = result.multi_hand_landmarks or []
    handedness = result.multi_handedness or []
    for lms, hd in zip(landmarks, handedness, strict=False):
        xs = np.array([p.x for p in lms.landmark]) * w
        ys = np.array([p.y for p in lms.landmark]) * h
        pad = 0.1 * max(xs.max() - xs.min(), ys.max() - ys.min())
        clipped = _clip_box(xs.min() - pad, ys.min() - pad, xs.max() + pad, ys.max() + pad, w, h)
        if clipped is None:
            continue
        cls = hd.classification[0]
        hands.append(HandBox(*clipped, score=float(cls.score), handedness=str(cls.label)))
    return sorted(hands, key=lambda b: -b.score)


POSE_MIN_VISIBILITY = 0.5
"""Landmarks mediapipe itself rates less visible than this are left out of the body box (pose
extrapolates hidden limbs, often far outside the frame)."""


def _pose_person(rgb: ImageArray) -> PersonBox | None:
    h, w = rgb.shape[:2]
    result = POSE.process(rgb)
    if result.pose_landmarks is None:
        return None
    pts = [
        (p.x * w, p.y * h, p.visibility)
        for p in result.pose_landmarks.landmark
        if p.visibility >= POSE_MIN_VISIBILITY
    ]
    # A handful of visible points is not a person: pose hallucinates on statues and textures.
    if len(pts) < 5:
        return None
    arr = np.array(pts)
    x0, x1 = arr[:, 0].min(), arr[:, 0].max()
    y0, y1 = arr[:, 1].min(), arr[:, 1].max()
    # Landmarks are joint centres; the body extends beyond them (head top above the eyes,
    # shoulders' width), so pad by a fraction of the skeleton's size.
    pad_x = 0.15 * (x1 - x0) + 0.02 * w
    pad_top = 0.25 * (y1 - y0) + 0.02 * h
    pad_bottom = 0.05 * (y1 - y0)
    clipped = _clip_box(x0 - pad_x, y0 - pad_top, x1 + pad_x, y1 + pad_bottom, w, h)
    if clipped is None:
        return None
    return PersonBox(*clipped, score=float(np.mean(arr[:, 2])), source="pose")


def _hog_people(rgb: ImageArray) -> list[PersonBox]:
    h, w = rgb.shape[:2]
    scale = min(1.0, HOG_MAX_SIDE / max(h, w))
    small = (
        cv2.resize(rgb, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
        if scale < 1.0
        else rgb
    )
    if min(small.shape[:2]) < 128:
        return []
    rects, weights = _HOG.get().detectMultiScale(
        small, winStride=(8, 8), padding=(8, 8), scale=1.05
    )
    people: list[PersonBox] = []
    for (x, y, bw, bh), wt in zip(rects, np.ravel(weights), strict=False):
        if float(wt) < HOG_MIN_WEIGHT:
            continue
        clipped = _clip_box(x / scale, y / scale, (x + bw) / scale, (y + bh) / scale, w, h)
        if clipped is not None:
            # Map the SVM margin (about 1..3) onto a 0..1 confidence.
            people.append(PersonBox(*clipped, score=float(min(1.0, wt / 3.0)), source="hog"))
    return non_max_suppression(people, 0.3)


def detect_people(image: ImageArray, use_hog: bool = True) -> list[PersonBox]:
    """People in an RGB(A) image, best first: the most prominent person from mediapipe pose
    (any pose, partial bodies included), plus upright people found by HOG that do not overlap
    it. Seated, crouching or heavily cropped people beyond the first are missed."""
    rgb = _as_rgb(image)
    people: list[PersonBox] = []
    main = _pose_person(rgb)
    if main is not None:
        people.append(main)
    if use_hog:
        for cand in _hog_people(rgb):
            if main is None or overlap_fraction(cand.box, main.box) < 0.5:
                people.append(cand)
    return non_max_suppression(people, 0.3)


def overlap_fraction(inner: Box, outer: Box) -> float:
    """Fraction of ``inner``'s area that lies inside ``outer``."""
    ix = max(0, min(inner[0] + inner[2], outer[0] + outer[2]) - max(inner[0], outer[0]))
    iy = max(0, min(inner[1] + inner[3], outer[1] + outer[3]) - max(inner[1], outer[1]))
    area = inner[2] * inner[3]
    return ix * iy / area if area > 0 else 0.0
