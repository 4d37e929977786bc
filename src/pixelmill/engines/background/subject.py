"""The subject's matte for each ``type``: any salient object, the single main product, or a
person (MediaPipe selfie segmentation fused with the U²-Net-p salient mask), and ``auto``,
which decides between a person and any object.

Every kind edits the *coarse* masks (the models' outputs resized to the image) at a reduced
working size, then turns the result into a trimap and mattes only its unknown band onto the
image's edges with the guided filter (:mod:`.trimap`), so a person or product matte costs what
the plain salient matte costs plus a few milliseconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Protocol

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.background.options import SubjectType
from pixelmill.engines.background.parts import whole_subject
from pixelmill.engines.background.person import person_mask, reduced
from pixelmill.engines.background.trimap import confident_alpha
from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.faces import FaceBox, detect_faces
from pixelmill.engines.runtime.segmentation import (
    Mask,
    coarse_mask,
    guide_image,
    guide_size,
)

DetectedType = Literal["person", "product", "object"]

WORK_SIDE = 512
"""Mask surgery (components, dilation) runs at most this large: the coarse masks come from
320² and 256² models, so nothing is lost."""

FACE_SIDE = 640
"""Faces are looked for on a copy this large (the detectors run at 128² / 192²)."""

PERSON_LOW, PERSON_HIGH = 0.25, 0.75
"""The selfie mask's soft range kept by the fusion (stretched to 0..1)."""

MIN_PERSON_FRACTION = 0.01
"""A person mask covering less of the image than this is not a subject."""


@dataclass(frozen=True)
class SubjectMatte:
    """A subject's matte and how it was found."""

    mask: Mask
    """The matte (0..1): the same array as ``alpha``."""
    alpha: Mask
    """The cut-out's alpha (:func:`.trimap.confident_alpha`): 1 inside the subject, 0 outside,
    soft only in a band around its edges."""
    detected: DetectedType
    faces: int
    """Faces found (``auto`` and ``person`` look; other types do not: 0)."""
    method: str
    confidence: Mask
    """The models' coarse (fused) confidence the trimap was made from, at the guided filter's
    solving size (:func:`~pixelmill.engines.runtime.segmentation.guide_size`)."""


def _work(mask: Mask) -> Mask:
    h, w = mask.shape
    f = WORK_SIDE / max(h, w)
    if f >= 1.0:
        return mask
    size = (max(1, round(w * f)), max(1, round(h * f)))
    return np.asarray(cv2.resize(mask, size, interpolation=cv2.INTER_AREA), np.float32)


def _full(mask: Mask, h: int, w: int) -> Mask:
    if mask.shape == (h, w):
        return mask
    interp = cv2.INTER_AREA if mask.shape[0] > h else cv2.INTER_LINEAR
    return np.asarray(cv2.resize(mask, (w, h), interpolation=interp), np.float32)


def _disc(radius: int) -> npt.NDArray[np.uint8]:
    shape = (2 * radius + 1, 2 * radius + 1)
    return np.asarray(cv2.getStructuringElement(cv2.MORPH_ELLIPSE, shape), dtype=np.uint8)


def _soft_keep(keep: npt.NDArray[np.bool_], radius: int) -> Mask:
    """A 0..1 weight that is 1 on ``keep`` and on a ``radius`` band around it (its soft edge),
    falling smoothly to 0 beyond."""
    band = cv2.dilate(keep.astype(np.uint8), _disc(radius)).astype(np.float32)
    return np.asarray(cv2.GaussianBlur(band, (0, 0), radius / 2.0), dtype=np.float32)


def single_object(coarse: Mask) -> Mask:
    """The coarse saliency with everything but its largest connected region removed (a
    product shot's stray props, reflections or a second item)."""
    binary = (coarse > 0.5).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
    if count <= 2:
        return coarse
    largest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    radius = max(2, round(0.01 * max(coarse.shape)))
    weight = np.maximum(_soft_keep(labels == largest, radius), 0.0)
    return np.asarray(coarse * np.minimum(weight * 2.0, 1.0), dtype=np.float32)


def fuse_person(coarse: Mask, person: Mask) -> Mask:
    """The person mask united with the salient regions that touch the person (a held object,
    a hand the person model cut off, hair the saliency kept); salient regions away from the
    person (a flag, a poster, a second object) are dropped."""
    # Where the saliency sees plain background and the person model is unsure (a flag pole
    # beside a head, a smoke-like blob by a camera), the person model is halved; then its soft
    # range 0.25..0.75 is stretched to 0..1, which drops what haze is left and keeps the 0.5
    # boundary.
    doubt = (coarse < 0.05) & (person < 0.8)
    person = np.where(doubt, person * 0.5, person)
    person = np.clip((person - PERSON_LOW) / (PERSON_HIGH - PERSON_LOW), 0.0, 1.0)
    h, w = coarse.shape
    reach = max(2, round(0.02 * math.hypot(h, w)))
    near = cv2.dilate((person > 0.5).astype(np.uint8), _disc(reach)) > 0
    binary = (coarse > 0.5).astype(np.uint8)
    _, labels = cv2.connectedComponents(binary, connectivity=8)
    touching = np.unique(labels[near & (binary > 0)])
    touching = touching[touching > 0]
    if touching.size == 0:
        return np.asarray(person, dtype=np.float32)
    keep = np.isin(labels, touching)
    # Only the kept regions and their own soft rims: faint saliency beside them stays out.
    weight = np.minimum(_soft_keep(keep, 2) * 2.0, 1.0)
    return np.asarray(np.maximum(person, coarse * weight), dtype=np.float32)


def _person_found(person: Mask, faces: list[tuple[int, int, int, int]]) -> bool:
    """Whether the person mask covers a found face and enough of the image to be the subject."""
    if float((person > 0.5).mean()) < MIN_PERSON_FRACTION:
        return False
    for x, y, bw, bh in faces:
        if bw > 0 and bh > 0 and float(person[y : y + bh, x : x + bw].mean()) >= 0.5:
            return True
    return False


SALIENT = "u2netp salient-object mask (320² model)"
PARTS = " + attached parts from the mask's own low confidence, detached fragments dropped"
PERSON = (
    "MediaPipe selfie segmentation (256² model) fused with the u2netp salient mask: salient "
    "regions touching the person kept, others dropped"
)
PRODUCT = "u2netp salient-object mask (320² model), largest object only"


class Saliency(Protocol):
    """A source of coarse salient-object masks other than the packaged U²-Net-p (a rembg
    model from ``PIXELMILL_MODELS_DIR``, :mod:`.models`)."""

    @property
    def name(self) -> str: ...

    def coarse(self, image: ImageArray) -> Mask: ...


def subject_matte(
    image: ImageArray,
    kind: SubjectType = "auto",
    saliency: Saliency | None = None,
    parts: bool = True,
) -> SubjectMatte:
    """The matte of ``image``'s subject for ``kind`` (see ``SubjectParams.type``), from
    ``saliency`` when given, else the packaged U²-Net-p. ``parts``: join the attached parts
    the model is unsure of and drop small detached fragments (:mod:`.parts`) for every kind
    but a person, and never in a picture with a face (issue 44)."""
    # The coarse masks are made at the size the guided filter solves on (a third of the
    # filter radius smaller than the image from ~750 px up), never at full resolution: the
    # trimap's matting is what brings the matte to the image's size.
    h, w = guide_size(*image.shape[:2])
    coarse = coarse_mask(image, (h, w)) if saliency is None else _full(saliency.coarse(image), h, w)
    # The image at that size, made once: the parts step's outline and the matting both use it.
    guide = guide_image(image, (h, w))
    faces = 0
    detected: DetectedType = "object"
    method = SALIENT
    small = reduced(image, FACE_SIDE)
    looked: list[list[FaceBox]] = []

    def faces_found() -> list[FaceBox]:
        # Faces are looked for once, and for ``object`` / ``product`` only when a part would
        # join (the parts step is never taken in a picture with a face).
        if not looked:
            looked.append(detect_faces(small))
        return looked[0]

    whole = (
        whole_subject(image, coarse, lambda: bool(faces_found()), guide)
        if parts and kind != "person"
        else coarse
    )
    fused: Mask = whole
    if kind == "product":
        fused = _full(single_object(_work(whole)), h, w)
        detected, method = "product", PRODUCT
    elif kind in ("person", "auto"):
        found = faces_found()
        faces = len(found)
        person: Mask | None = None
        if kind == "person" or found:
            person = _work(person_mask(image, (h, w)))
        if person is not None:
            f = person.shape[1] / small.shape[1]
            boxes = [
                (round(b.x * f), round(b.y * f), round(b.w * f), round(b.h * f)) for b in found
            ]
            if kind == "person" or _person_found(person, boxes):
                fused = _full(fuse_person(_work(coarse), person), h, w)
                detected, method = "person", PERSON
    if whole is not coarse and detected != "person":
        method += PARTS
    alpha = confident_alpha(image, fused, guide)
    if saliency is not None:
        method = method.replace(
            "u2netp salient-object mask (320² model)",
            f"{saliency.name} salient-object mask (PIXELMILL_MODELS_DIR)",
        ).replace("the u2netp salient mask", f"the {saliency.name} salient mask")
    return SubjectMatte(alpha, alpha, detected, faces, method, fused)
