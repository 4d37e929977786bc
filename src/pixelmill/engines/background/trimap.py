"""A cut-out's alpha that is opaque inside the subject and soft only at its boundary.

The segmentation models give a *confidence*, not an opacity: U²-Net-p says 0.3-0.6 over a
cat's chest fur or a plant's lower leaves, and used as alpha that became a half-transparent
ghost (19 % of the cat photo's pixels were partly transparent). Here the confidence only makes
a trimap, at the guided filter's solving size (~0.1 MP for a 1 MP photo, so it costs a few
milliseconds):

- **decision**: the subject is what the model gives at least ``HIGH`` (0.5), grown by the
  connected plateaus of at least ``LOW`` (0.25) that touch it (hysteresis; a plateau must be
  wider than ``2 * PLATEAU`` solving pixels, so the thin rim of an ordinary edge's ramp does
  not push the outline outwards); holes enclosed by the subject are filled unless the model
  calls them plain background (mean confidence below ``HOLE_CONFIDENCE``: the inside of a cup's
  handle stays open);
- **pockets**: a region enclosed by what the model is sure of (>= ``POCKET_CORE``), where it
  is unsure, and whose colour is the backdrop's around the subject rather than the subject's
  around it, is the backdrop seen through a handle or a loop, and is taken out of the
  subject (:func:`open_pockets`);
- **sure foreground / background**: the decision eroded / dilated by twice the guided
  filter's solving radius; alpha is exactly 1 / 0 there;
- **unknown band** between them: the binary decision is matted onto the image's own edges by
  the guided filter (colour guide, the same radius and solving size as before, so it costs what
  the old edge snap cost) and its ramp stretched from [0.15, 0.85] to [0, 1], so an edge the
  image shows soft (fur, blur) stays soft and a hard edge is crisp.

Measured on 24 composites with a known alpha (``bench/bench_background.py --ghosts``: four
photo subjects cut out with the reference masks, over three textures with edges feathered by a
1.2 px Gaussian and three scene photos with 3 px), against the matte before (the same
confidence snapped and stretched from [0.08, 0.92]): interior pixels with alpha < 0.9, pooled,
and the boundary error (SAD) in the band around the true edge; the figures are in
``docs/engines.md``. Tried and not kept: alpha from local foreground / background colour means
in the band (SAD +8 to +22 %); a smaller guided-filter eps (1e-3, 3e-4) or the model's own
confidence mixed into the band's input (lower SAD on the 3 px composites, but visibly blurred
edges on real product photos); a 0.8x filter radius (SAD -1 %, +17 ms at 1 MP). Test-time flip
fusion would double the model's cost and was not tried.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.segmentation import (
    Mask,
    guide_image,
    guided_radius,
    guided_step,
    snap_to_edges,
)

HIGH = 0.5
"""Model confidence that makes a pixel part of the subject by itself."""
LOW = 0.25
"""Model confidence of a plateau that joins the subject when it touches it."""
PLATEAU = 2
"""Opening radius (solving pixels) a plateau must survive: ramps at ordinary edges are thinner."""
HOLE_CONFIDENCE = 0.1
"""An enclosed hole whose mean confidence is at least this is part of the subject."""
SPECK_FRACTION = 0.0005
"""Enclosed holes smaller than this fraction of the image are filled whatever the model says."""
POCKET_CORE = 0.75
"""A pocket is an enclosed region where the model is below this (not sure of the subject)..."""
POCKET_CONFIDENCE = 0.6
"""... on average below this, ..."""
POCKET_SIZE = 0.001
"""... at least this fraction of the frame, ..."""
POCKET_MATCH = 10.0
"""... whose mean colour (CIELAB, 8-bit scale) is within this of the backdrop's near the
subject ..."""
POCKET_RATIO = 0.25
"""... and at most this share of its distance to the subject around it: the backdrop seen
through a bag's handle or a mug's, which the model half sees as the subject."""
POCKET_REACH = 0.1
"""The backdrop "near the subject": within this fraction of the long side outside it."""
RAMP = (0.15, 0.85)
"""The guided filter's output range stretched to alpha 0..1 in the band."""

Binary = npt.NDArray[np.bool_]
Colour = npt.NDArray[np.float64]


def _disc(radius: int) -> npt.NDArray[np.uint8]:
    shape = (2 * radius + 1, 2 * radius + 1)
    return np.asarray(cv2.getStructuringElement(cv2.MORPH_ELLIPSE, shape), dtype=np.uint8)


def enclosed(components: npt.ArrayLike, shape: tuple[int, int]) -> Binary:
    """Which of the components whose ``stats`` (``cv2.connectedComponentsWithStats``) are given
    do not touch the edge of a frame of ``shape`` (the first, the background, never)."""
    stats = np.asarray(components)
    h, w = shape
    x, y = stats[:, cv2.CC_STAT_LEFT], stats[:, cv2.CC_STAT_TOP]
    inside: Binary = (
        (x > 0)
        & (y > 0)
        & (x + stats[:, cv2.CC_STAT_WIDTH] < w)
        & (y + stats[:, cv2.CC_STAT_HEIGHT] < h)
    )
    inside[0] = False
    return inside


def subject_decision(confidence: Mask) -> Binary:
    """Which pixels of ``confidence`` (the model's 0..1 output, any size) are the subject: the
    confident core, the plateaus of moderate confidence touching it, and its enclosed holes
    unless they look like background."""
    strong = confidence >= HIGH
    plateau = ((confidence >= LOW) & ~strong).view(np.uint8)
    opened = np.asarray(cv2.morphologyEx(plateau, cv2.MORPH_OPEN, _disc(PLATEAU)), np.uint8)
    candidate = (strong | (opened > 0)).view(np.uint8)
    count, labels = cv2.connectedComponents(candidate, connectivity=8)
    if count <= 1:
        return strong
    touching = np.zeros(count, np.bool_)
    touching[labels[strong]] = True
    touching[0] = False
    subject: Binary = touching[labels]
    return _fill_holes(subject, confidence)


def _fill_holes(subject: Binary, confidence: Mask) -> Binary:
    h, w = subject.shape
    background = (~subject).view(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(background, connectivity=4)
    if count <= 1:
        return subject
    area = stats[:, cv2.CC_STAT_AREA]
    total = np.bincount(labels.ravel(), weights=confidence.ravel(), minlength=count)
    mean = total / np.maximum(area, 1)
    fill = enclosed(stats, (h, w)) & ((mean >= HOLE_CONFIDENCE) | (area <= SPECK_FRACTION * h * w))
    fill[0] = False
    if not fill.any():
        return subject
    filled: Binary = subject | fill[labels]
    return filled


def open_pockets(subject: Binary, confidence: Mask, guide: ImageArray) -> Binary:
    """``subject`` with its pockets of backdrop opened: each region enclosed by the pixels the
    model is sure of (``POCKET_CORE``), of the size, mean confidence and colour the ``POCKET_*``
    constants give (``guide``: the image at ``confidence``'s size), is taken out of it.

    Measured: the loose bag of ``bench/multipart.py`` (brick seen through its handle, the model
    at 0.35 there): the pocket's colour is 3.3 from the backdrop's and 47.4 from the bag's; of
    the 68 CBSD68 photos, 11 have enclosed regions of that size and confidence, none nearer the
    backdrop than 0.7 times its distance to the subject around it (an animal's paler patch)."""
    core = confidence >= POCKET_CORE
    count, labels, stats, _ = cv2.connectedComponentsWithStats(
        (~core).view(np.uint8), connectivity=4
    )
    h, w = confidence.shape
    area = stats[:, cv2.CC_STAT_AREA]
    unsure = np.bincount(labels.ravel(), weights=confidence.ravel(), minlength=count)
    candidates = (
        enclosed(stats, (h, w))
        & (area >= POCKET_SIZE * h * w)
        & (unsure < POCKET_CONFIDENCE * np.maximum(area, 1))
    )
    if not candidates.any() or subject.all():
        return subject
    # The backdrop near the subject: outside it, within POCKET_REACH of it.
    gap = cv2.distanceTransform((~subject).view(np.uint8), cv2.DIST_L2, 3)
    near = (gap > 0) & (gap <= POCKET_REACH * max(h, w))
    if not near.any():
        return subject
    lab = cv2.cvtColor(cv2.GaussianBlur(guide[..., :3], (0, 0), 1.0), cv2.COLOR_RGB2LAB)

    def mean(where: Binary, box: tuple[slice, slice] = (slice(None), slice(None))) -> Colour:
        return np.asarray(cv2.mean(lab[box], mask=where.view(np.uint8))[:3], np.float64)

    backdrop = mean(near)
    opened = subject.copy()
    for i in np.flatnonzero(candidates):
        # The pocket's box and 4 px around it (the 3 px ring).
        x0, y0 = max(0, int(stats[i, 0]) - 4), max(0, int(stats[i, 1]) - 4)
        box = (
            slice(y0, int(stats[i, 1] + stats[i, 3]) + 4),
            slice(x0, int(stats[i, 0] + stats[i, 2]) + 4),
        )
        pocket = labels[box] == i
        ring = (cv2.dilate(pocket.view(np.uint8), _disc(3)) > 0) & core[box]
        if not ring.any():
            continue
        own = mean(pocket, box)
        to_backdrop = float(np.linalg.norm(own - backdrop))
        to_subject = float(np.linalg.norm(own - mean(ring, box)))
        if to_backdrop <= POCKET_MATCH and to_backdrop <= POCKET_RATIO * to_subject:
            opened[box] &= ~pocket
    return opened


def confident_alpha(image: ImageArray, confidence: Mask, guide: ImageArray | None = None) -> Mask:
    """The cut-out alpha (0..1 at ``image``'s size) of the subject in ``confidence`` (the
    model's coarse output, best at :func:`~pixelmill.engines.runtime.segmentation.guide_size`):
    1 inside the subject, 0 outside, matted onto the image's edges only in the band between.
    ``guide``: the image at that size, when the caller has it (:func:`.snap_to_edges`)."""
    h, w = image.shape[:2]
    radius = guided_radius(h, w)
    band = 2 * max(1, round(radius / guided_step(radius)))
    subject = subject_decision(confidence)
    if guide is None or guide.shape[:2] != confidence.shape:
        guide = guide_image(image, confidence.shape)
    subject = open_pockets(subject, confidence, guide)
    binary = subject.view(np.uint8)
    # +1 sure foreground, -1 sure background, 0 unknown; brought to full size in one resize.
    sure = cv2.erode(binary, _disc(band)).astype(np.float32)
    sure -= (cv2.dilate(binary, _disc(band)) == 0).astype(np.float32)
    soft = snap_to_edges(image, binary.astype(np.float32), radius, guide)
    lo, hi = RAMP
    alpha = (soft - np.float32(lo)) * np.float32(1.0 / (hi - lo))
    sure_full = cv2.resize(sure, (w, h), interpolation=cv2.INTER_LINEAR)
    np.clip(alpha, 0.0, 1.0, out=alpha)
    alpha[sure_full > 0.5] = 1.0
    alpha[sure_full < -0.5] = 0.0
    return alpha
