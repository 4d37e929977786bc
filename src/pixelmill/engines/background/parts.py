"""The whole product, and nothing detached: attached parts the model is unsure of joined to the
subject, and small detached fragments dropped.

U²-Net-p judges saliency against the whole frame. When a product fills the frame (a cup on a
saucer cropped tightly, the saucer reaching the frame's edges) it calls the saucer background:
its confidence there falls to ~1e-3. But that is still 10-100 times the confidence it gives the
real background (~1e-5 on the table), so the model's *own* low-confidence map, read on a log
scale, still shows the part. Here that signal is read region by region:

- the image is split (at ``SIDE`` px, Felzenszwalb's graph segmentation: :mod:`.regions`)
  into regions of coherent colour bounded by its edges, several times (``SEGMENTATIONS``):
  one segmentation merges its regions otherwise when the same photo comes at another size,
  and a part joined at one size was not at the next; a pixel joins when ``VOTE`` of them join
  it;
- a region that touches the subject (or a region already joined; or lies along the subject
  within ``NEAR``, at least ``NEAR_RUN`` of its pixels, with only a sliver of another region
  between them, the subject's blended edge) joins it when at least
  ``HOT`` of its pixels farther than ``HALO`` from the subject (the model's smooth fall-off
  around any object is not evidence) have a confidence at least ``RELATIVE`` times the
  background's level (the 25th percentile of the confidence outside the subject) and at least
  ``FLOOR`` (``PLAIN_FLOOR`` on a plain backdrop);
- a region touching a joined region of its colour (``COLOUR`` in CIELAB, lightness weighed
  ``LIGHTNESS``: shade darkens a surface, it does not recolour it) joins when most of it is
  above ``WARM`` times the background's level; and a region touching the subject, away from the
  frame's edge, of the joined parts' overall colour (``BRIDGE``) joins whatever the model says
  (a saucer's shadowed side under the cup, which the model gives the table's confidence);
- on a plain backdrop (``PLAIN``: a studio sweep or a gradient, not a scene) a region of the
  backdrop's own chroma is the backdrop or its shadow, and is not joined by ``BRIDGE``;
- each joined piece must look like a product's part: no larger than ``MAX_PIECE`` times the
  subject, of a colour of its own (``DISTINCT`` from the rest of the background in chroma, or,
  on a plain backdrop, in CIELAB with lightness weighed ``LIGHTNESS``: a black lid on a grey
  sweep; in a scene a darker patch of the background's colour is the scene in shade); and sit
  where a part can: away from the frame's edge, or meeting it only within ``REACH`` of where
  the subject itself does (a tight framing), or wrapping the subject (in at least ``WRAP`` of
  the directions around it: a saucer under a cup, cut by the frame) along at most
  ``MAX_RUN`` of the edge and not across the frame. A piece that runs along the edge by
  itself (a rocket's launch pad, a table, a wall, a footbridge) is the scene and is dropped;
- the joined regions' enclosed gaps are filled (a saucer's inside between its rim and the cup);
- nothing is joined when the result would cover most of the frame (``MAX_COVER``) or the
  joined regions would run along most of its border (``MAX_BORDER``), nor to a subject that
  already runs along a whole side (``MAX_SUBJECT_BORDER``: a portrait's shoulders); and
  :func:`whole_subject` joins nothing in a picture with a face (a person's jacket, the flag
  behind them: the person fusion handles people).

Then a detached component smaller than ``FRAGMENT`` of the largest one and farther than
``DETACHED`` from it (a reflection's wisp, a crumb) is dropped from the confidence, so the
trimap never sees it; a small piece right beside the subject (a tuft of fur) is its edge.

The joined parts are found at ``SIDE`` px, so their outline is a few pixels off at the
confidence's size (a lid's brim lumpy, a knob rounded off, some backdrop kept beside it). The
band of ``OUTLINE`` around it is decided again at that size by colour (:func:`refine_outline`):
a pixel stays with the part when its colour is nearer the part's than the background's, each
taken as the local mean of the sure pixels on its side.

The result is a new coarse confidence (the joined parts set to 1, the fragments to 0) for
:func:`.trimap.confident_alpha`, which mattes its edges onto the image as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.background.regions import contacts, region_sums, segmentations
from pixelmill.engines.background.trimap import enclosed
from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.segmentation import Mask, guide_image

SIDE = 128
"""Long side (pixels) of the copy the regions are found on."""
SEGMENTATIONS = tuple((sigma, scale) for sigma in (0.6, 0.7) for scale in (120.0, 150.0, 180.0))
"""Felzenszwalb's (smoothing sigma, scale) for each segmentation the parts are found on. One
segmentation is fragile: the same photo at another size (resampled, so its 128 px copy differs
by a grey level here and there) merges its regions otherwise, and a part joins at one size and
not at the next (coffee's centre square at 400-1000 px, issue 44)."""
VOTE = 0.5
"""A pixel joins when at least this share of the segmentations join it."""
MIN_REGION = 20
"""Smallest region (pixels at ``SIDE``)."""
RELATIVE = 20.0
"""A joined region's confidence is at least this many times the background's level..."""
FLOOR = 3e-4
"""... and at least this (``PLAIN_FLOOR`` on a plain backdrop: see ``PLAIN``)."""
PLAIN_FLOOR = 1e-4
"""The floor on a plain backdrop, where the model's background level is low and even (about
1e-6) and no texture lifts it: a black lid on a grey sweep, which the model sees at 1e-4 to
1e-3 (its outline more than its inside)."""
HOT = 0.6
"""The share of a region's pixels (beyond the halo) that must reach that level."""
HALO = 0.04
"""Pixels nearer the subject than this fraction of ``SIDE`` are not looked at."""
ROUNDS = 6
"""Regions join in at most this many rounds (each round, regions touching the last)."""
MAX_COVER = 0.85
"""Nothing joins when the subject would then cover more of the frame than this."""
MAX_BORDER = 0.5
"""Nothing joins when the joined regions would run along more of the border than this."""
FRAGMENT = 0.02
"""A detached component smaller than this fraction of the largest is dropped..."""
DETACHED = 0.02
"""... when it lies farther than this fraction of the long side from the largest."""
CLOSE = 0.06
"""The joined subject is closed with a disc of this fraction of ``SIDE`` before its enclosed gaps
are filled (a part's thin rim is seldom one unbroken region)."""
COLOUR = 15.0
"""A region touching a joined part joins too when its mean colour is this close (CIELAB, 8-bit
scale) to that part's: the part's shadowed side, which the model does not see."""
WARM = 3.0
"""... and when most of its pixels have at least this many times the background's confidence."""
BRIDGE = 16.0
"""A region touching both the subject and a joined part, away from the frame's edge, joins when
its mean colour is this close (lightness weighed as below) to the joined parts' mean colour."""
LIGHTNESS = 0.5
"""Weight of CIELAB lightness in that colour distance (a* and b* weigh 1): a part's shadowed side
is darker, not another colour."""
MAX_SUBJECT_BORDER = 0.15
"""Nothing joins a subject that already runs along more of the frame's border than this."""
BINS = 36
"""Sectors (10° each) of the directions around the subject that :func:`wrap_share` counts."""
WRAP = 0.3
"""A part touching the frame's edge away from the subject joins only when it lies in at least
this share of the directions around the subject (it wraps the subject)."""
REACH = 0.08
"""How far (a fraction of ``SIDE``) along the frame's edge a part may run beyond the subject's
own contact with it."""
OVERRUN = 2
"""Edge pixels (at ``SIDE``) a part may run beyond that reach."""
MAX_PIECE = 1.2
"""A joined piece larger than this many times the subject is the scene."""
DISTINCT = 6.0
"""A joined piece's mean chroma (CIELAB a*, b*; with lightness, weighed ``LIGHTNESS``, on a plain
backdrop) differs at least this much from the rest of the background's."""
MAX_RUN = 0.15
"""A piece that wraps the subject runs along at most this share of the frame's edge beyond the
subject's own contact."""
NEAR = 2.0
"""A region with pixels this near the subject (pixels at ``SIDE``) touches it even when a sliver
of another region (the subject's blended edge) lies between them."""
NEAR_RUN = 8
"""... when at least this many of its pixels are that near (it lies along the subject, not
beside it at a point)."""
SMOOTH = 2.0
"""A pixel whose CIELAB channels change by less than this per pixel (8-bit scale, at ``SIDE``)
is smooth..."""
PLAIN = 0.85
"""... and a backdrop with at least this share of smooth pixels (farther than ``HALO`` from the
subject) is plain (a studio sweep, a gradient; none of the 68 CBSD68 scenes, at most 0.73; the
set's plain and gradient composites, shadowed or not, at least 0.86): there
a part's lightness makes it distinct as much as its chroma (a black lid on a grey sweep), the
floor is ``PLAIN_FLOOR``, and a region of the backdrop's chroma (its shadow) is not joined by
colour alone."""
SUBJECT = 0.5
"""The confidence that makes a pixel part of the subject (as :data:`.trimap.HIGH`)."""
OUTLINE = 1.5
"""Half-width (pixels at ``SIDE``) of the band around a joined part's outline that
:func:`refine_outline` decides again at the confidence's size."""


def _small(
    image: ImageArray, confidence: Mask, guide: ImageArray | None = None
) -> tuple[ImageArray, Mask]:
    """The image and the confidence at ``SIDE`` px (area-averaged). The image is averaged down
    from ``guide`` (the image at the confidence's size) when the caller has it: from a 1 MP
    photo 3.1 → 0.5 ms, from 12 MP 37 → 0.4 ms. The copy then differs from one averaged from
    the full image by a grey level here and there, which the segmentations' vote absorbs
    mostly (``bench_background.py --parts-sizes``: coffee's centre square resampled twice
    keeps its saucer at 13 of 17 sides against 12; only images over ~750 px, whose guide is
    smaller than they are, change)."""
    h, w = confidence.shape
    f = SIDE / max(h, w)
    size = (max(1, round(w * f)), max(1, round(h * f)))
    source = guide if guide is not None and guide.shape[:2] == (h, w) else image[..., :3]
    rgb = np.ascontiguousarray(source[..., :3])
    small = np.asarray(cv2.resize(rgb, size, interpolation=cv2.INTER_AREA), np.uint8)
    conf = np.asarray(cv2.resize(confidence, size, interpolation=cv2.INTER_AREA), np.float32)
    return small, conf


def _fill_enclosed(mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """``mask`` with the background regions it encloses (not touching the frame) filled."""
    outside = (~mask).view(np.uint8)
    _count, labels, stats, _ = cv2.connectedComponentsWithStats(outside, connectivity=4)
    filled: npt.NDArray[np.bool_] = mask | enclosed(stats, mask.shape)[labels]
    return filled


def _frame(shape: tuple[int, int]) -> npt.NDArray[np.bool_]:
    """The frame's outermost rows and columns."""
    rim = np.zeros(shape, np.bool_)
    rim[0, :] = rim[-1, :] = rim[:, 0] = rim[:, -1] = True
    return rim


def wrap_share(part: npt.NDArray[np.bool_], centre: tuple[float, float]) -> float:
    """The share of the directions around ``centre`` (the subject's, row and column; in
    ``BINS`` sectors) in which ``part`` lies: a saucer under a cup spans the lower half and
    more, a launch pad under a rocket a narrow sector."""
    py, px = np.nonzero(part)
    if py.size == 0:
        return 0.0
    angle = np.arctan2(py - centre[0], px - centre[1])
    sector = np.floor((angle + np.pi) / (2 * np.pi) * BINS).astype(np.int64) % BINS
    return float(np.unique(sector).size / BINS)


def beyond_reach(subject: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """The pixels of the frame's edge farther than ``REACH`` from where ``subject`` meets it
    (all of them when it does not): a part running along them runs beyond the subject."""
    frame = _frame(subject.shape)
    contact = subject & frame
    if not contact.any():
        return frame
    gap = cv2.distanceTransform((~contact).view(np.uint8), cv2.DIST_L2, 3)
    far: npt.NDArray[np.bool_] = frame & (gap > REACH * SIDE)
    return far


class _Pixels(NamedTuple):
    """What the segmentations share, found once per image: per-pixel values of the ``SIDE``
    copy (flat) that are summed over each region (``rows``, indexed by the ``_AREA`` ...
    ``_LAB`` constants) and over each joined piece (``piece_rows``, see :func:`_placed`)."""

    subject: npt.NDArray[np.bool_]
    rows: npt.NDArray[np.float64]
    piece_rows: npt.NDArray[np.float64]
    plain: bool  # a plain backdrop (PLAIN)
    backdrop: npt.NDArray[np.float64]  # the mean chroma outside the subject
    backdrop_sum: npt.NDArray[np.float64]  # what DISTINCT compares, summed outside the subject
    backdrop_count: float  # pixels outside the subject
    size: float  # pixels in the subject
    centre: tuple[float, float]  # the subject's (row, column)
    beyond: npt.NDArray[np.bool_]  # the frame's edge beyond the subject's reach (beyond_reach)


_AREA, _INSIDE, _FAR, _HOT, _NEAR, _WARM, _FRAME = range(7)
"""Rows of :attr:`_Pixels.rows`: 1; in the subject; farther than the halo from it; far, and at
the joining level; within ``NEAR`` of it, outside it; at ``WARM`` times the background's level;
on the frame's edge..."""
_LAB = slice(7, 10)
"""... and CIELAB's three channels."""


def _pixels(small: ImageArray, conf: Mask, subject: npt.NDArray[np.bool_]) -> _Pixels:
    background = float(np.percentile(conf[~subject], 25))
    gap = cv2.distanceTransform((~subject).view(np.uint8), cv2.DIST_L2, 3)
    lab = cv2.cvtColor(small, cv2.COLOR_RGB2LAB).astype(np.float32)
    beyond = gap > HALO * SIDE
    plain = _plain(lab, beyond)
    level = max(PLAIN_FLOOR if plain else FLOOR, RELATIVE * background)
    far = beyond.ravel()
    values = conf.ravel()
    rows = np.empty((10, subject.size), np.float64)
    rows[_AREA] = 1.0
    rows[_INSIDE] = subject.ravel()
    rows[_FAR] = far
    rows[_HOT] = far & (values >= level)
    rows[_NEAR] = ((gap > 0) & (gap <= NEAR)).ravel()
    rows[_WARM] = values >= WARM * background
    rows[_FRAME] = _frame(subject.shape).ravel()
    rows[_LAB] = lab.reshape(-1, 3).T
    # What DISTINCT compares: the chroma, or on a plain backdrop all of CIELAB (lightness
    # weighed LIGHTNESS).
    weights = np.array([LIGHTNESS, 1.0, 1.0], np.float32)
    colour = (lab * weights if plain else lab[..., 1:]).astype(np.float64)
    channels = colour.reshape(-1, colour.shape[-1]).T
    outside = ~subject
    ys, xs = np.nonzero(subject)
    return _Pixels(
        subject=subject,
        rows=rows,
        piece_rows=np.ascontiguousarray(
            np.concatenate(
                [
                    rows[_AREA][None],
                    channels,
                    1.0 - rows[_INSIDE][None],
                    channels * (1.0 - rows[_INSIDE]),
                ]
            )
        ),
        plain=plain,
        backdrop=lab[outside][:, 1:].mean(axis=0).astype(np.float64),
        backdrop_sum=colour[outside].sum(axis=0),
        backdrop_count=float(outside.sum()),
        size=float(ys.size),
        centre=(float(ys.mean()), float(xs.mean())),
        beyond=beyond_reach(subject),
    )


def _plain(lab: npt.NDArray[np.float32], backdrop: npt.NDArray[np.bool_]) -> bool:
    """Whether the ``backdrop`` pixels are plain: at least ``PLAIN`` of them smooth (``SMOOTH``),
    a studio sweep or a gradient, not a scene."""
    if not backdrop.any():
        return False
    steep = np.zeros(backdrop.shape, np.float32)
    for channel in cv2.split(lab):
        dx = cv2.Sobel(channel, cv2.CV_32F, 1, 0, ksize=3)
        dy = cv2.Sobel(channel, cv2.CV_32F, 0, 1, ksize=3)
        steep = np.maximum(steep, cv2.magnitude(dx, dy) / 8)
    return float((steep[backdrop] < SMOOTH).mean()) >= PLAIN


def _placed(parts: npt.NDArray[np.bool_], px: _Pixels) -> npt.NDArray[np.bool_] | None:
    """The joined parts' connected pieces that sit where a product's part can, and look like one:

    - no larger than ``MAX_PIECE`` times the subject, and of a colour of its own (its
      mean CIELAB chroma, or on a plain backdrop all of CIELAB, at least ``DISTINCT`` from the
      rest of the background: a saucer on a table, a lid on bricks or on a grey sweep; the
      forest floor under a tiger is the forest's colour);
    - away from the frame's edge, or meeting it only where the subject does (a tight framing),
      or wrapping the subject (a saucer under a cup, cut by the frame) while running along at
      most ``MAX_RUN`` of the frame's edge and not across the frame (from one side to the
      opposite one). A piece that runs along the edge by itself (a launch pad under a rocket,
      a table, a wall, a footbridge) is the scene.
    """
    count, labels = cv2.connectedComponents(parts.view(np.uint8), connectivity=8)
    # Each piece's size and colour sum, and its pixel count and colour sum outside the subject
    # (the rest of the background is the background's total without them).
    sums = region_sums(np.asarray(labels, np.int32), count, px.piece_rows)
    k = px.backdrop_sum.size
    area, colours, out, out_colours = (
        sums[:, 0],
        sums[:, 1 : 1 + k],
        sums[:, 1 + k],
        sums[:, 2 + k :],
    )
    kept = np.zeros_like(parts)
    perimeter = 2 * (parts.shape[0] + parts.shape[1])
    for i in range(1, count):
        rest = px.backdrop_count - out[i]
        if area[i] > MAX_PIECE * px.size or rest <= 0:
            continue
        piece = labels == i
        own = float(
            np.linalg.norm(colours[i] / area[i] - (px.backdrop_sum - out_colours[i]) / rest)
        )
        if own < DISTINCT:
            continue
        overrun = int((piece & px.beyond).sum())
        if overrun <= OVERRUN:
            kept |= piece
            continue
        spans = (piece[0].any() and piece[-1].any()) or (piece[:, 0].any() and piece[:, -1].any())
        if not spans and overrun <= MAX_RUN * perimeter and wrap_share(piece, px.centre) >= WRAP:
            kept |= piece
    return kept if kept.any() else None


def _segment_parts(px: _Pixels, seg: npt.NDArray[np.int32]) -> npt.NDArray[np.bool_] | None:
    """The parts joined to the subject on one segmentation ``seg`` (``None`` when none is)."""
    subject = px.subject
    n = int(seg.max()) + 1
    sums = region_sums(seg, n, px.rows)
    area = sums[:, _AREA]
    inside = sums[:, _INSIDE] / area
    counted = sums[:, _FAR]
    hot = (sums[:, _HOT] >= HOT * counted) & (counted >= 0.5 * area)
    contact = contacts(seg, n) >= 2
    member = inside >= 0.5
    beside = sums[:, _NEAR] >= NEAR_RUN
    touching = (contact[:, member].any(axis=1) | beside) & ~member
    if not (touching & hot).any():
        # The first round joins hot regions only (the colour rules continue a joined part):
        # none touches the subject, so nothing joins (most photos; the colours are not read).
        return None
    warm = sums[:, _WARM] >= 0.5 * area
    mean = sums[:, _LAB] / area[:, None]
    # Shade changes a surface's lightness more than its chroma.
    mean[:, 0] *= LIGHTNESS
    framed = sums[:, _FRAME] > 0
    # On a plain backdrop, a region of the backdrop's own chroma is the backdrop or its shadow:
    # it is not bridged by colour alone.
    shade = np.zeros(n, np.bool_)
    if px.plain:
        shade = np.linalg.norm(mean[:, 1:] - px.backdrop, axis=1) < DISTINCT
    # What the rounds compare, found once: the regions in contact of one colour (``COLOUR``),
    # and those a bridge may join (touching the subject, inside the frame, not its shade).
    distance = np.linalg.norm(mean[:, None, :] - mean[None, :, :], axis=2)
    alike_pairs = contact & (distance <= COLOUR)
    bridgeable = contact[:, member].any(axis=1) & ~framed & ~shade
    joined = np.zeros(n, np.bool_)
    for _ in range(ROUNDS):
        alike = np.zeros(n, np.bool_)
        bridge = np.zeros(n, np.bool_)
        if contact[:, joined].any():
            # A region touching a joined region of its colour, and above the background's
            # confidence, continues that part (its shadowed side).
            alike = alike_pairs[:, joined].any(axis=1) & warm
            # A region between the subject and a joined part, inside the frame, of the joined
            # parts' overall colour lies on the part too (a saucer's side under the cup that
            # the model gives the table's confidence).
            model = (mean[joined] * area[joined, None]).sum(axis=0) / area[joined].sum()
            bridge = bridgeable & (np.linalg.norm(mean - model, axis=1) <= BRIDGE)
        grow = touching & (hot | alike | bridge)
        if not grow.any():
            break
        member |= grow
        joined |= grow
        touching = (contact[:, member].any(axis=1) | beside) & ~member
    if not joined.any():
        return None
    parts = _placed(joined[seg], px)
    if parts is None:
        return None
    return _whole(parts, subject)


def _whole(
    parts: npt.NDArray[np.bool_], subject: npt.NDArray[np.bool_]
) -> npt.NDArray[np.bool_] | None:
    """What ``parts`` add to ``subject``, their enclosed gaps filled (``None`` when that would
    cover most of the frame or run along most of its border)."""
    edge = np.concatenate([parts[0], parts[-1], parts[:, 0], parts[:, -1]])
    radius = max(1, round(CLOSE * SIDE))
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
    closed = cv2.morphologyEx((subject | parts).view(np.uint8), cv2.MORPH_CLOSE, disc) > 0
    # The closing bridges gaps next to the joined parts only, not the subject's own bays.
    beside = cv2.dilate(parts.view(np.uint8), disc) > 0
    whole = _fill_enclosed(subject | parts | (closed & beside))
    if float(whole.mean()) > MAX_COVER or float(edge.mean()) > MAX_BORDER:
        return None
    added: npt.NDArray[np.bool_] = whole & ~subject
    return added


def attached_parts(
    image: ImageArray, confidence: Mask, guide: ImageArray | None = None
) -> npt.NDArray[np.bool_] | None:
    """The parts joined to the subject, as a mask at ``SIDE`` scale (``None`` when none is):
    the pixels that at least ``VOTE`` of the segmentations (``SEGMENTATIONS``) join."""
    small, conf = _small(image, confidence, guide)
    subject = conf >= SUBJECT
    if not subject.any() or subject.all():
        return None
    rim = np.concatenate([subject[0], subject[-1], subject[:, 0], subject[:, -1]])
    if float(rim.mean()) > MAX_SUBJECT_BORDER:
        # A subject cut by the frame along a whole side (a portrait's shoulders) is no product
        # with parts around it: what touches it there is the scene.
        return None
    px = _pixels(small, conf, subject)
    if not px.rows[_HOT].any():
        # Regions join first on hot pixels (the colour rules only continue a joined part).
        return None
    needed = VOTE * len(SEGMENTATIONS)
    votes = np.zeros(subject.shape, np.int32)
    for done, seg in enumerate(segmentations(small, SEGMENTATIONS, MIN_REGION), 1):
        added = _segment_parts(px, seg)
        if added is not None:
            votes += added
        if int(votes.max()) + len(SEGMENTATIONS) - done < needed:
            # No pixel can reach the vote any more (most photos: nothing joins on the first
            # four segmentations): the rest are not run.
            return None
    agreed = votes >= needed
    return agreed if agreed.any() else None


def drop_fragments(confidence: Mask) -> Mask:
    """``confidence`` without the detached components (at :data:`SUBJECT`) smaller than
    ``FRAGMENT`` of the largest and farther than ``DETACHED`` (of the long side) from it: a
    speck or a reflection's wisp. A small piece right beside the subject (a tuft of fur, a
    strand) is its edge, and stays."""
    binary = (confidence >= SUBJECT).view(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
    if count <= 2:
        return confidence
    areas = stats[:, cv2.CC_STAT_AREA].copy()
    areas[0] = 0
    largest = int(np.argmax(areas))
    small = areas < FRAGMENT * areas[largest]
    small[0] = False
    if not small.any():
        return confidence
    gap = np.asarray(
        cv2.distanceTransform((labels != largest).view(np.uint8), cv2.DIST_L2, 3), np.float32
    )
    # Each small component's distance from the largest, read in its own box.
    for i in np.flatnonzero(small):
        x, y, w, h = (int(v) for v in stats[i, :4])
        box = (slice(y, y + h), slice(x, x + w))
        nearest = float(gap[box][labels[box] == i].min())
        small[i] = nearest > DETACHED * max(confidence.shape)
    if not small.any():
        return confidence
    # The fragment and its soft rim (the pixels just below the threshold around it, nearer it
    # than the subject) go.
    gone = cv2.dilate(small[labels].view(np.uint8), np.ones((5, 5), np.uint8)) > 0
    away = gap > 0.5 * DETACHED * max(confidence.shape)
    out = confidence.copy()
    out[(gone & away & (binary == 0)) | small[labels]] = 0.0
    return out


def whole_subject(
    image: ImageArray,
    confidence: Mask,
    face: Callable[[], bool] | None = None,
    guide: ImageArray | None = None,
) -> Mask:
    """``confidence`` (the model's coarse output, at any size) with the subject's attached
    parts set to 1 and its small detached fragments to 0. ``face``: whether the picture holds
    a face, asked only when a part would join (a person's jacket or the flag behind them is
    no part: the person fusion handles people). ``guide``: the image at the confidence's size
    (:func:`~pixelmill.engines.runtime.segmentation.guide_image`), when the caller has it."""
    parts = attached_parts(image, confidence, guide)
    out = confidence
    if parts is not None and not (face is not None and face()):
        h, w = confidence.shape
        up = cv2.resize(parts.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
        joined = refine_outline(image, confidence >= SUBJECT, up >= 0.5, guide)
        out = np.maximum(confidence, joined.astype(np.float32))
    return drop_fragments(np.asarray(out, np.float32))


def refine_outline(
    image: ImageArray,
    subject: npt.NDArray[np.bool_],
    part: npt.NDArray[np.bool_],
    guide: ImageArray | None = None,
) -> npt.NDArray[np.bool_]:
    """``part`` (joined pixels at the confidence's size, found at ``SIDE``) with the band of
    ``OUTLINE`` around its outline, away from ``subject``, decided again by colour: a pixel is
    the part's when its CIELAB colour (lightly blurred) is nearer the local mean of the part's
    sure pixels (inside the band) than that of the background's (outside it, and outside the
    subject), both taken in a window of three band widths. Where either side has no sure pixel
    in the window the pixel keeps its place; a 5 px median removes single-pixel specks."""
    h, w = part.shape
    radius = max(2, round(OUTLINE * max(h, w) / SIDE))
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
    sure = cv2.erode(part.view(np.uint8), disc) > 0
    band = (cv2.dilate(part.view(np.uint8), disc) > 0) & ~sure & ~subject
    if not band.any():
        return part
    away = ~(cv2.dilate((part | subject).view(np.uint8), disc) > 0)
    small = guide if guide is not None and guide.shape[:2] == (h, w) else guide_image(image, (h, w))
    lab = np.asarray(cv2.cvtColor(cv2.GaussianBlur(small, (0, 0), 1.0), cv2.COLOR_RGB2LAB))
    # Only the band's box (and the window's reach around it) is looked at.
    half = 3 * radius
    ys, xs = np.nonzero(band)
    box = (
        slice(max(0, int(ys.min()) - half), int(ys.max()) + half + 1),
        slice(max(0, int(xs.min()) - half), int(xs.max()) + half + 1),
    )
    colour = lab[box].astype(np.float32)
    window = (2 * half + 1, 2 * half + 1)

    def local_sums(side: npt.NDArray[np.bool_]) -> tuple[Mask, npt.NDArray[np.float32]]:
        weight = side[box].astype(np.float32)
        count = cv2.boxFilter(weight, -1, window, normalize=False)
        total = cv2.boxFilter(colour * weight[..., None], -1, window, normalize=False)
        return np.asarray(count, np.float32), np.asarray(total, np.float32)

    inside_count, inside_total = local_sums(sure)
    outside_count, outside_total = local_sums(away)
    decide = band[box] & (inside_count > 0.5) & (outside_count > 0.5)
    # The local means, where a pixel is decided only.
    inside = inside_total[decide] / np.maximum(inside_count[decide], 1e-6)[:, None]
    outside = outside_total[decide] / np.maximum(outside_count[decide], 1e-6)[:, None]
    here = colour[decide]
    nearer = np.linalg.norm(here - inside, axis=1) < np.linalg.norm(here - outside, axis=1)
    refined = part.copy()
    refined[box][decide] = nearer
    smooth = cv2.medianBlur(refined.astype(np.uint8) * 255, 5) > 127
    out: npt.NDArray[np.bool_] = smooth | sure
    return out
