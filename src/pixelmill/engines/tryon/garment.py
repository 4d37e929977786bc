"""Reading a garment's shape from its cut-out: where its shoulders, neckline, armpits, hem and
sleeves are, so it can be fitted to a body.

The garment is assumed to be photographed (or drawn) flat and upright, front facing, as a
packshot is: a top, a jacket or a dress. Its silhouette is read row by row:

- the *centre line* and the *body half-width* come from the rows below the sleeves (the run of
  opaque pixels through the centre, whose width is steady there);
- the *armpit* is the row below which the central run is no wider than the body (above it,
  the run holds the sleeves); without sleeves, the bottom of the armholes;
- *sleeves* are the opaque pixels outside the body's columns above the armpit, plus any
  separate run beside the body below it (sleeves hanging down); each is described by its
  root on the body's side, its axis (root to centroid) and points on its outline;
- the *shoulder points* are the top edge at the body's side columns, the *neck* the top edge
  at the centre (the bottom of the neck opening), the *hem* the last row of the centre run.

Trousers and skirts (no shoulders) are not read as tops: :func:`read_garment` says so.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import EngineError, ImageArray

Point = tuple[float, float]


@dataclass(frozen=True)
class Sleeve:
    """One sleeve in garment pixels: its ``root`` (the top of its seam with the body, where
    it meets the shoulder line), its ``axis`` (unit vector from the root through the sleeve's
    centroid), how far it ``reach``-es along the axis, and ``sections``: at several distances
    along the axis, the sleeve's extent across it ``(along, first, last)`` (across is measured
    along the axis turned 90° clockwise on screen, ``(-axis_y, axis_x)``)."""

    root: Point
    axis: Point
    reach: float
    """How far the sleeve reaches along the axis from the root (95th percentile)."""
    sections: tuple[tuple[float, float, float], ...]

    @property
    def length(self) -> float:
        return self.reach

    def point(self, along: float, across: float) -> Point:
        """Garment pixels of a point given in the sleeve's own coordinates."""
        ax, ay = self.axis
        return (self.root[0] + ax * along - ay * across, self.root[1] + ay * along + ax * across)


@dataclass(frozen=True)
class Garment:
    """A top's landmarks in the pixels of its cropped RGBA cut-out ``rgba``.

    ``left``/``right`` are the *wearer's* sides, as in the body landmarks: the wearer's left
    shoulder is on the image's right for a garment seen from the front."""

    rgba: ImageArray
    parts: npt.NDArray[np.uint8]
    """Per pixel: 1 the body, 2 the wearer's left sleeve (image right), 3 the right sleeve."""
    cx: float
    half_width: float
    top_y: float
    neck_y: float
    armpit_y: float
    hem_y: float
    left_shoulder: Point
    right_shoulder: Point
    left_sleeve: Sleeve | None
    right_sleeve: Sleeve | None

    @property
    def shoulder_mid(self) -> Point:
        (lx, ly), (rx, ry) = self.left_shoulder, self.right_shoulder
        return (lx + rx) / 2, (ly + ry) / 2

    def sides_at(self, y: float) -> tuple[float, float]:
        """The central run's left and right edges (image x) at row ``y`` (clamped to the
        garment), or the body's columns where the centre is open (the neck opening)."""
        alpha = self.rgba[..., 3]
        row = int(min(max(round(y), 0), alpha.shape[0] - 1))
        run = _central_run(alpha[row] > 127, round(self.cx))
        if run is None:
            return self.cx - self.half_width, self.cx + self.half_width
        return float(run[0]), float(run[1])


def _central_run(row: npt.NDArray[np.bool_], cx: int) -> tuple[int, int] | None:
    """``(first, last + 1)`` of the run of True through column ``cx`` (None if it is False)."""
    w = row.size
    if not 0 <= cx < w or not row[cx]:
        return None
    left = np.flatnonzero(~row[:cx])
    right = np.flatnonzero(~row[cx:])
    first = int(left[-1]) + 1 if left.size else 0
    last = cx + int(right[0]) if right.size else w
    return first, last


MIN_SLEEVE_SHARE = 0.015
"""A side with fewer sleeve pixels than this share of the garment is sleeveless."""


def _sleeve(
    xx: npt.NDArray[np.intp],
    yy: npt.NDArray[np.intp],
    mine: npt.NDArray[np.bool_],
    side_x: float,
    span: tuple[float, float],
    total: int,
) -> Sleeve | None:
    """One sleeve from its pixels (``mine``). Its axis points from the middle of its seam
    (on the body's side column ``side_x``, between the shoulder and armpit rows ``span``)
    through the sleeve's centroid (a short, wide T-shirt sleeve's longest extent runs across
    it, so its principal direction would be wrong); its root, the pivot it turns about when
    worn, is the top of the seam, where it meets the shoulder line."""
    if np.count_nonzero(mine) < MIN_SLEEVE_SHARE * total:
        return None
    pts = np.stack([xx[mine], yy[mine]], axis=1).astype(np.float64)
    seam = np.array([side_x, (span[0] + span[1]) / 2])
    c = pts.mean(axis=0)
    axis = c - seam
    n = float(np.hypot(*axis))
    if n < 1e-6:
        return None
    axis /= n
    near = np.abs(pts[:, 0] - side_x) <= 2.0
    root = np.array([side_x, float(pts[near, 1].min()) if near.any() else span[0]])
    normal = np.array([-axis[1], axis[0]])
    along = (pts - root) @ axis
    across = (pts - root) @ normal
    sections: list[tuple[float, float, float]] = []
    edges = np.linspace(float(along.min()), float(along.max()), 8)
    for lo, hi in itertools.pairwise(edges):
        sel = (along >= lo) & (along <= hi)
        if np.count_nonzero(sel) < 3:
            continue
        sections.append(((lo + hi) / 2, float(across[sel].min()), float(across[sel].max())))
    if not sections:
        return None
    reach = float(np.quantile(along, 0.95))
    return Sleeve((float(root[0]), float(root[1])), (float(axis[0]), float(axis[1])), reach,
                  tuple(sections))  # fmt: skip


def read_garment(rgba: ImageArray) -> Garment:
    """The garment's landmarks (``rgba`` cropped to the garment). Raises
    :class:`EngineError` when the silhouette is not a top, jacket or dress seen from the
    front."""
    solid = rgba[..., 3] > 127
    h, w = solid.shape
    rows = np.flatnonzero(solid.any(axis=1))
    if rows.size < 8 or w < 8:
        raise EngineError("the garment is too small to fit")
    top, bottom = int(rows[0]), int(rows[-1]) + 1
    # Centre line: the middle of the lower half's extents (sleeves rarely reach that low on
    # both sides; a hanging sleeve is a separate run and does not move the centre run).
    lower = range(top + (bottom - top) // 2, bottom)
    mids = []
    for y in lower:
        xs = np.flatnonzero(solid[y])
        if xs.size:
            mids.append((xs[0] + xs[-1] + 1) / 2)
    cx = float(np.median(mids)) if mids else w / 2
    icx = round(cx)
    runs: dict[int, tuple[int, int]] = {}
    for y in range(top, bottom):
        run = _central_run(solid[y], min(max(icx, 0), w - 1))
        if run is not None:
            runs[y] = run
    if len(runs) < 0.5 * (bottom - top):
        raise EngineError("the garment's outline could not be read (is it a top seen flat?)")
    widths = {y: (r[1] - r[0]) / 2 for y, r in runs.items()}
    band = [widths[y] for y in range(top + round(0.4 * (bottom - top)),
                                     top + round(0.7 * (bottom - top))) if y in widths]  # fmt: skip
    half = float(np.median(band)) if band else float(np.median(list(widths.values())))
    # Armpit: just below the lowest row (in the upper 60 %) where the central run is wider
    # than the body, i.e. still holds the sleeves; without sleeves, the first row from the
    # top that is as wide as the body (the bottom of the armholes).
    upper = top + 0.6 * (bottom - top)
    wide = [y for y, hw in widths.items() if hw > 1.2 * half and y < upper]
    if wide:
        armpit = max(wide) + 1
    else:
        full = [y for y, hw in widths.items() if hw >= 0.95 * half and y > top]
        armpit = min(full) if full else top + round(0.3 * (bottom - top))
    hem = max(runs)
    neck = min(runs)
    # Shoulder points: the top edge 0.9 body half-widths from the centre; where an armhole
    # cuts in there (a tank top), the outer edge of the strap, the last column inwards whose
    # top edge is near the garment's top.
    tops = np.where(solid.any(axis=0), solid.argmax(axis=0), h)
    near_top = top + 0.12 * (bottom - top)
    shoulders: list[Point] = []
    for sign in (1, -1):  # wearer's left (image right) first
        x = min(max(round(cx + sign * 0.9 * half), 0), w - 1)
        while tops[x] > near_top and abs(x - cx) > 0.15 * half:
            x -= sign
        shoulders.append((float(x), float(tops[x])))
    in_run = np.zeros((h, w), np.uint8)
    for y, (a, b) in runs.items():
        in_run[y, a:b] = 1
    in_run = np.asarray(cv2.dilate(in_run, np.ones((5, 5), np.uint8)), np.uint8)
    gy, gx = np.mgrid[0:h, 0:w]
    sleeve_zone = (np.abs(gx - cx) > 1.05 * half) & ((gy < armpit + 4) | (in_run == 0))
    parts = np.where(sleeve_zone, np.where(gx > cx, 2, 3), 1).astype(np.uint8)
    yy, xx = np.nonzero(solid)
    sleeve_px = sleeve_zone[yy, xx]
    shoulder_y = (shoulders[0][1] + shoulders[1][1]) / 2
    sleeves = [
        _sleeve(xx, yy, sleeve_px & (np.sign(xx - cx) == sign), cx + sign * half,
                (shoulder_y, float(armpit)), yy.size)
        for sign in (1, -1)
    ]  # fmt: skip
    return Garment(
        rgba=rgba,
        parts=parts,
        cx=cx,
        half_width=half,
        top_y=float(top),
        neck_y=float(neck),
        armpit_y=float(armpit),
        hem_y=float(hem),
        left_shoulder=shoulders[0],
        right_shoulder=shoulders[1],
        left_sleeve=sleeves[0],
        right_sleeve=sleeves[1],
    )
