"""A cut-out keeps the product's attached parts and drops detached fragments (issue 44 item 3),
on ``skimage.data.coffee()`` (a cup on a saucer with a spoon) with a hand-drawn saucer mask
(``bench/multipart.py``: an ellipse a few pixels inside the saucer's rim, less the cup and the
spoon, checked by eye), at full frame and as its centre square (the saucer reaching the frame's
edges), and on a composite whose distractor is known.

Measured (opaque: alpha >= 0.9): full frame, the saucer 99.7 % opaque before and after; centre
square, 0.8 % before and 99.4 % after (its shadowed right side, which the model gives the
table's confidence, joins as a region between the cup and the joined saucer of the saucer's
colour), and the detached wisp of the spoon's reflection (0.38 % of the subject) is gone.

The step is on by default for every type but ``person``; it never joins anything in a picture
with a face (nor, by its other guards, Grace Hopper's jacket and the flag behind her), and
the reference cut-outs of ``test_fast_paths.py`` (a rocket whose launch pad runs off the frame,
a cat, the astronaut) hold with it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import cv2
import matplotlib
import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image
from skimage import data

from pixelmill.engines.background.options import SubjectType
from pixelmill.engines.background.parts import drop_fragments, whole_subject
from pixelmill.engines.background.subject import subject_matte
from pixelmill.engines.runtime.segmentation import coarse_mask, guide_size

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
import multipart
from multipart import coffee_saucer, coffee_square


def fragments(alpha: npt.NDArray[np.float32]) -> list[float]:
    """Areas of the detached components beside the largest, as shares of the subject."""
    _count, _, stats, _ = cv2.connectedComponentsWithStats((alpha > 0.5).astype(np.uint8))
    areas = np.sort(stats[1:, cv2.CC_STAT_AREA])
    return [float(a / areas.sum()) for a in areas[:-1]]


@pytest.mark.parametrize("kind", ["auto", "object", "product"])
def test_full_frame_keeps_the_saucer_and_nothing_detached(kind: SubjectType) -> None:
    image = np.ascontiguousarray(data.coffee())  # type: ignore[no-untyped-call]
    saucer, cup = coffee_saucer()
    assert saucer.mean() > 0.1 and cup.mean() > 0.1
    alpha = subject_matte(image, kind, parts=True).alpha
    assert float((alpha[saucer] >= 0.9).mean()) >= 0.9
    assert max(fragments(alpha), default=0.0) <= 0.005


@pytest.mark.parametrize("kind", ["auto", "object"])
def test_centre_square_keeps_more_of_the_saucer_and_drops_the_wisp(kind: SubjectType) -> None:
    image, saucer = coffee_square()
    before = subject_matte(image, kind, parts=False).alpha
    after = subject_matte(image, kind, parts=True).alpha
    assert float((before[saucer] >= 0.9).mean()) < 0.05  # the loss the issue reports
    assert max(fragments(before)) > 0.003  # and the spoon reflection's wisp beside the cup
    assert float((after[saucer] >= 0.9).mean()) >= 0.9
    # ... and little of the table: measured 1.5 % of the frame opaque farther than 15 px
    # (the saucer's rim lies outside the hand-drawn mask) from the saucer and the cup.
    whole, cup = coffee_saucer()
    product = cv2.resize(
        (whole | cup)[:, 100:500].astype(np.uint8),
        saucer.shape[::-1],
        interpolation=cv2.INTER_NEAREST,
    )
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (31, 31))
    near = cv2.dilate(product, disc) > 0
    assert float(((after >= 0.5) & ~near).mean()) <= 0.025
    assert max(fragments(after), default=0.0) <= 0.005
    # The cup itself stays whole: everything opaque before is still opaque.
    kept = before >= 0.9
    assert float((after[kept] >= 0.5).mean()) >= 0.99


def test_nothing_joins_in_a_picture_with_a_face() -> None:
    path = Path(matplotlib.get_data_path()) / "sample_data" / "grace_hopper.jpg"
    with Image.open(path) as im:
        portrait = np.ascontiguousarray(im.convert("RGB"))[:380]
    # Her jacket and the flag behind her stay out.
    on = subject_matte(portrait, "object", parts=True)
    off = subject_matte(portrait, "object", parts=False)
    assert np.array_equal(on.alpha, off.alpha)
    # The face guard itself: the square's saucer joins only when no face is found.
    image, saucer = coffee_square()
    conf = coarse_mask(image, guide_size(*image.shape[:2]))
    small = cv2.resize(saucer.astype(np.uint8), conf.shape[::-1]) > 0
    without = whole_subject(image, conf, lambda: False)
    with_face = whole_subject(image, conf, lambda: True)
    assert float((without[small] >= 0.5).mean()) >= 0.9
    assert float((with_face[small] >= 0.5).mean()) <= 0.1


@pytest.mark.parametrize("side", [400, 800, 1000])
def test_the_saucer_joins_whatever_the_input_size(side: int) -> None:
    # The same centre square resized: one segmentation joined the saucer at 512 px but not at
    # 400 or 800 px (0.7 % of it opaque); the vote over segmentations joins it at every size.
    image = np.asarray(data.coffee(), np.uint8)  # type: ignore[no-untyped-call]
    saucer, cup = coffee_saucer()
    crop = np.ascontiguousarray(
        cv2.resize(image[:, 100:500], (side, side), interpolation=cv2.INTER_CUBIC), np.uint8
    )
    conf = coarse_mask(crop, guide_size(side, side))
    size = conf.shape[::-1]
    on = cv2.resize(saucer[:, 100:500].astype(np.uint8), size, interpolation=cv2.INTER_NEAREST)
    product = cv2.resize(
        (saucer | cup)[:, 100:500].astype(np.uint8), size, interpolation=cv2.INTER_NEAREST
    )
    before = conf >= 0.5
    after = whole_subject(crop, conf, lambda: False) >= 0.5
    assert float(before[on > 0].mean()) < 0.05
    assert float(after[on > 0].mean()) >= 0.9
    # ... and not the table: little joins farther than 6 % of the side from the cup and saucer.
    r = round(0.06 * size[0])
    near = cv2.dilate(product, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1,) * 2)) > 0
    assert float((after & ~before & ~near).mean()) <= 0.02


def test_small_detached_fragments_are_dropped_and_a_second_shoe_is_not() -> None:
    conf = np.zeros((200, 300), np.float32)
    conf[40:160, 30:110] = 1.0  # one shoe
    conf[40:160, 180:255] = 0.9  # the other, a little smaller
    conf[10:14, 280:284] = 0.8  # a speck
    out = drop_fragments(conf)
    assert out[10:14, 280:284].max() == 0.0
    assert np.array_equal(out[40:160, 30:110], conf[40:160, 30:110])
    assert np.array_equal(out[40:160, 180:255], conf[40:160, 180:255])


def test_segmentations_stop_once_no_pixel_can_reach_the_vote(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # coffee at full frame joins nothing on any segmentation: after four of the six, no pixel
    # can reach half the votes, so the last two are not run (the answer is the same: None).
    import pixelmill.engines.background.parts as parts_module
    from pixelmill.engines.background import regions

    calls: list[float] = []
    real = regions.segmentations

    def counted(
        image: npt.NDArray[np.uint8], settings: Sequence[tuple[float, float]], min_size: int
    ) -> Iterator[npt.NDArray[np.int32]]:
        for (_sigma, scale), labels in zip(settings, real(image, settings, min_size), strict=True):
            calls.append(scale)
            yield labels

    monkeypatch.setattr(parts_module, "segmentations", counted)
    image = np.ascontiguousarray(data.coffee())  # type: ignore[no-untyped-call]
    conf = coarse_mask(image, guide_size(*image.shape[:2]))
    assert parts_module.attached_parts(image, conf) is None
    assert len(calls) == 4
    # Where a part joins (the centre square), all six vote.
    calls.clear()
    square, _saucer = coffee_square()
    joined = parts_module.attached_parts(square, coarse_mask(square, guide_size(512, 512)))
    assert joined is not None and joined.any()
    assert len(calls) == len(parts_module.SEGMENTATIONS)


def _lid_over_pot(
    rim: bool,
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    """A red pot the model is sure of, a blue lid above it at 2e-3 (200 times the plain
    backdrop's 1e-5) and, with ``rim``, a 3 px white rim round the pot between them (the blended
    edge a photo's subject often has), in the pot's fall-off."""
    n = 256
    rng = np.random.default_rng(3)
    image = np.full((n, n, 3), (225, 222, 215), np.float32) + rng.normal(0, 3, (n, n, 3))
    pot = np.zeros((n, n), np.uint8)
    cv2.ellipse(pot, (128, 165), (70, 45), 0, 0, 360, 1, -1)
    lid_mask = np.zeros((n, n), np.uint8)
    cv2.ellipse(lid_mask, (128, 112), (80, 14), 0, 0, 360, 1, -1)
    lid = (lid_mask > 0) & (pot == 0)
    image[pot > 0] = (170, 40, 35)
    image[lid] = (40, 60, 150)
    if rim:
        image[(cv2.dilate(pot, np.ones((7, 7), np.uint8)) > 0) & (pot == 0)] = (250, 250, 250)
    conf = np.full((n, n), 1e-5, np.float32)
    conf[pot > 0] = 1.0
    conf[lid] = 2e-3
    gap = cv2.distanceTransform((pot == 0).view(np.uint8), cv2.DIST_L2, 3)
    conf = np.maximum(conf, 0.5 * np.exp(-gap / 2.0)).astype(np.float32)
    return np.clip(image, 0, 255).astype(np.uint8), conf, lid


@pytest.mark.parametrize("rim", [False, True])
def test_a_part_beyond_the_subjects_blended_edge_joins(rim: bool) -> None:
    # The set's pot with its lid at a tight framing (bench/multipart.py): the lid is hot but a
    # sliver of another region (the pot's edge) lay between it and the pot, so it never touched
    # the subject and was lost (0 % of it kept before NEAR, 97 % with it and without the rim).
    image, conf, lid = _lid_over_pot(rim)
    out = whole_subject(image, conf, lambda: False)
    assert float((out[lid] >= 0.5).mean()) >= 0.9
    # ... and not the backdrop beside it.
    assert float((out >= 0.5).mean()) <= float((conf >= 0.5).mean()) + 1.25 * float(lid.mean())


def _pot_on_a_sweep(shadow: bool) -> tuple[npt.NDArray[np.uint8], list[npt.NDArray[np.bool_]]]:
    """``bench/multipart.py``'s pot and black lid, loosely framed on its plain grey sweep and,
    with ``shadow``, a soft contact shadow under the pot (the sweep darkened by up to 60 %)."""
    rng = np.random.default_rng(0)
    parts = multipart._products(rng, 0.8, 0.0, 0.0)["pot+lid"]
    backdrop = multipart._backgrounds()["plain"]
    if shadow:
        ys, xs = np.nonzero(np.logical_or.reduce(parts))
        under = np.zeros(backdrop.shape[:2], np.uint8)
        centre = ((int(xs.min()) + int(xs.max())) // 2, int(ys.max()))
        cv2.ellipse(
            under, centre, ((int(xs.max()) - int(xs.min())) // 2 + 10, 16), 0, 0, 360, 1, -1
        )
        dark = cv2.GaussianBlur(under.astype(np.float32), (0, 0), 7) * 0.6
        backdrop = backdrop * (1 - dark[..., None])
    image = multipart._draw(parts, multipart.KINDS["pot+lid"], multipart._textures(), backdrop)
    return image, parts


@pytest.mark.parametrize("shadow", [False, True])
def test_a_black_lid_on_a_plain_sweep_joins_and_its_shadow_does_not(shadow: bool) -> None:
    # The model sees the lid at 1e-4 to 1e-3 (its outline more than its inside), about 100 times
    # the sweep's level but under FLOOR, and the lid is the sweep's chroma (black on grey): 0.1 %
    # of it was kept. On a plain backdrop the floor is PLAIN_FLOOR and lightness counts as the
    # part's own colour (measured: 94.9 % kept).
    image, (pot, lid) = _pot_on_a_sweep(shadow)
    before = subject_matte(image, "auto", parts=False).alpha
    after = subject_matte(image, "auto", parts=True).alpha
    assert float((before[lid] >= 0.9).mean()) < 0.05
    assert float((after[lid] >= 0.9).mean()) >= 0.9
    assert float((after[pot] >= 0.9).mean()) >= 0.95
    # ... and the sweep stays out: on it, a region of the sweep's own chroma (its shadow) is not
    # bridged to the joined lid by colour alone (without that rule 1.8 % of the frame beyond the
    # product was opaque, the shadow).
    product = cv2.dilate((pot | lid).astype(np.uint8), np.ones((9, 9), np.uint8)) > 0
    assert float((after >= 0.5)[~product].mean()) <= 0.005


@pytest.mark.parametrize("shadow", [False, True])
def test_a_joined_parts_outline_follows_the_image(shadow: bool) -> None:
    # The lid is joined on the 128 px copy: upsampled, its brim was lumpy, its knob rounded off
    # and some sweep kept beside it (IoU with the pot and lid 0.966 / 0.957 with the shadow).
    # The band around the joined outline is decided again by colour at full size: 0.988.
    image, parts = _pot_on_a_sweep(shadow)
    truth = np.logical_or.reduce(parts)
    cut = subject_matte(image, "auto").alpha > 0.5
    assert float((cut & truth).sum() / (cut | truth).sum()) >= 0.98
