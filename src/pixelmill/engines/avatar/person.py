"""Finding the person in a reference photo and cutting them out.

Detection (:func:`find_person`) is the cheap part and runs before anything is charged: the
runtime's person finder (:mod:`~pixelmill.engines.runtime.person`: MediaPipe pose with its
person segmentation) and face detection. A photo counts as showing a person when the face
detector finds a face or pose sees enough landmarks; the prior is the union of the pose and
selfie person masks (selfie segmentation alone paints a "person" over cats and coffee cups
alike: measured 0.91 and 0.23 of the frame, so it only shapes the mask).

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

from pixelmill.engines.base import EngineError, ImageArray
from pixelmill.engines.runtime.faces import FaceBox, detect_faces
from pixelmill.engines.runtime.person import Mask, anchors, keep_person, region_box, sight
from pixelmill.engines.runtime.segmentation import mask_to_alpha, salient_mask, snap_to_edges

Framing = Literal["full", "half", "head"]

KEEP_RATIO = 10
"""The cut-out keeps detached regions at most this many times smaller than the person's
(:func:`~pixelmill.engines.runtime.person.keep_person`): a photo's stray background goes."""
NO_PERSON = "no person found in the reference image"


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


def find_person(image: ImageArray) -> Person:
    """The person in ``image``; raises :class:`EngineError` when there is none."""
    seen = sight(image, NO_PERSON)
    faces = detect_faces(seen.rgb)
    if not faces and not seen.is_person:
        raise EngineError(NO_PERSON)
    prior = seen.selfie_mask()
    if seen.pose_mask is not None:
        prior = np.maximum(prior, seen.pose_mask)
    face = faces[0] if faces else None
    box = region_box(prior, anchors(seen.landmarks, face))
    if box is None:
        raise EngineError(NO_PERSON)
    h = seen.rgb.shape[0]
    framings = _framings(seen.landmarks, box, h)
    return Person(seen.rgb, seen.landmarks, prior, face, framings, box, seen.scale)


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
    return keep_person(alpha, anchors(person.landmarks, person.face), KEEP_RATIO)
