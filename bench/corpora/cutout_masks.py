"""The cut-out corpus (issue 62 item 1): photos with ground-truth masks from public
salient-object / dichotomous-segmentation sets, kept out of the repository (their licences
allow research use, not redistribution: ``docs/corpora-cutouts.md``), read from a folder the
operator downloaded them into.

Layout: any folder tree in which each photo (``.jpg``/``.jpeg``/``.png``) has a mask of the same
stem in a sibling folder whose name says so (``gt``, ``GT``, ``mask``, ``masks``, ``*-Mask``;
the photos' folder is ``im``, ``images``, ``Image``, ``imgs``, ``*-Image``), which is how DIS5K,
DUTS-TE, ECSSD and HKU-IS unpack. A sample's id is ``<set>/<stem>`` (``<set>``: the folder above
the photos' folder, e.g. ``DIS-TE1``).

- **Categories**: DIS5K names its photos ``<n>#<group>#<m>#<Category>#<id>.jpg``; the category
  is read from that, or from ``categories.csv`` (``id,category``) at the corpus root, else it
  is ``uncategorised``. Categories are grouped into the product types the issue names
  (:data:`GROUPS`: cups with handles, bags with straps, jars and bottles with lids, plants...).
- **Split**: by the SHA-256 of the id, even first byte ``tune``, odd ``report`` (stable, does
  not depend on which other files are there); never tune on ``report``.
- **Framings**: the photo as it is (``full``), its centred largest square (``square``) and a
  tight crop to the mask's box with 3 % of its long side around it (``tight``: the product
  touching or nearly touching the frame).

``python bench/corpora/cutout_masks.py DIR`` lists what it finds per set, half and group.
"""

from __future__ import annotations

import csv
import hashlib
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import cv2
import numpy as np
import numpy.typing as npt

Half = Literal["tune", "report"]
Framing = Literal["full", "square", "tight"]
FRAMINGS: tuple[Framing, ...] = ("full", "square", "tight")

IMAGE_DIRS = ("im", "images", "image", "imgs", "img")
MASK_DIRS = ("gt", "mask", "masks", "groundtruth", "ground_truth")
SUFFIXES = (".jpg", ".jpeg", ".png")
TIGHT_MARGIN = 0.03
"""The tight crop's margin around the mask's box, a fraction of the box's long side."""

GROUPS: dict[str, tuple[str, ...]] = {
    "cups with handles": ("cup", "mug", "teapot", "kettle", "jug", "pitcher"),
    "bags with straps": ("bag", "handbag", "backpack", "purse", "basket", "suitcase"),
    "jars and bottles with lids": ("jar", "bottle", "vase", "pot", "can", "bowl", "lamp"),
    "plants": ("plant", "flower", "tree", "leaf", "cactus", "bonsai", "bouquet"),
    "chairs and frames": ("chair", "stool", "table", "bench", "frame", "rack", "shelf", "stand"),
    "tools and utensils": ("fork", "spoon", "knife", "tool", "scissors", "wrench", "racket"),
    "vehicles": ("bicycle", "bike", "car", "motorcycle", "cart", "stroller", "boat", "ship"),
    "animals": ("animal", "cat", "dog", "bird", "horse", "insect", "fish", "deer"),
    "people": ("person", "people", "human", "man", "woman", "child"),
}
"""Product types (issue 62 item 4) and the category words that fall in each (a category with
one of the words, singular or plural, case-insensitive; the first group that matches); others
are ``other``."""


@dataclass(frozen=True)
class Sample:
    """One photo of the corpus and its mask (``mask``: True on the subject)."""

    id: str
    source: str
    category: str
    group: str
    half: Half
    image_path: Path
    mask_path: Path

    def load(self, max_side: int = 0) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
        """The photo (RGB) and mask, the long side brought down to ``max_side`` (0: as is)."""
        bgr = cv2.imread(str(self.image_path), cv2.IMREAD_COLOR)
        grey = cv2.imread(str(self.mask_path), cv2.IMREAD_GRAYSCALE)
        if bgr is None or grey is None:
            raise ValueError(f"{self.id}: unreadable photo or mask")
        if grey.shape != bgr.shape[:2]:
            grey = cv2.resize(grey, bgr.shape[1::-1], interpolation=cv2.INTER_NEAREST)
        h, w = grey.shape
        if max_side and max(h, w) > max_side:
            f = max_side / max(h, w)
            size = (max(1, round(w * f)), max(1, round(h * f)))
            bgr = cv2.resize(bgr, size, interpolation=cv2.INTER_AREA)
            grey = cv2.resize(grey, size, interpolation=cv2.INTER_AREA)
        rgb = np.ascontiguousarray(bgr[..., ::-1], dtype=np.uint8)
        return rgb, np.asarray(grey > 127)


def half_of(sample_id: str) -> Half:
    """``tune`` or ``report``, from the SHA-256 of the id (even first byte: tune)."""
    return "tune" if hashlib.sha256(sample_id.encode()).digest()[0] % 2 == 0 else "report"


def group_of(category: str) -> str:
    """The product type (a key of :data:`GROUPS`, or ``other``) of a category name."""
    words = {w.removesuffix("es") for w in re.split(r"[^a-z]+", category.lower())}
    words |= {w.removesuffix("s") for w in re.split(r"[^a-z]+", category.lower())}
    for group, keys in GROUPS.items():
        if words & set(keys):
            return group
    return "other"


def category_of(stem: str, listed: dict[str, str], sample_id: str) -> str:
    """The category: ``categories.csv``'s, else DIS5K's from the file name, else
    ``uncategorised``."""
    if sample_id in listed:
        return listed[sample_id]
    fields = stem.split("#")
    if len(fields) >= 5 and fields[3]:
        return fields[3]
    return "uncategorised"


def _kind(folder: str) -> str | None:
    name = folder.lower()
    if name in IMAGE_DIRS or name.endswith("-image"):
        return "image"
    if name in MASK_DIRS or name.endswith("-mask"):
        return "mask"
    return None


def _listed(root: Path) -> dict[str, str]:
    path = root / "categories.csv"
    if not path.is_file():
        return {}
    with path.open(newline="") as f:
        return {row["id"]: row["category"] for row in csv.DictReader(f) if row.get("id")}


def samples(root: Path) -> list[Sample]:
    """Every photo under ``root`` that has a mask, sorted by id."""
    listed = _listed(root)
    out: dict[str, Sample] = {}
    for folder in sorted(p for p in root.rglob("*") if p.is_dir() and _kind(p.name) == "image"):
        masks = {
            m.stem: m
            for sibling in folder.parent.iterdir()
            if sibling.is_dir() and _kind(sibling.name) == "mask"
            for m in sibling.iterdir()
            if m.suffix.lower() in SUFFIXES
        }
        source = folder.parent.name
        for image in sorted(folder.iterdir()):
            if image.suffix.lower() not in SUFFIXES or image.stem not in masks:
                continue
            sample_id = f"{source}/{image.stem}"
            category = category_of(image.stem, listed, sample_id)
            out[sample_id] = Sample(
                sample_id,
                source,
                category,
                group_of(category),
                half_of(sample_id),
                image,
                masks[image.stem],
            )
    return [out[k] for k in sorted(out)]


def frame(
    image: npt.NDArray[np.uint8], mask: npt.NDArray[np.bool_], framing: Framing
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
    """The photo and mask at ``framing`` (:data:`FRAMINGS`)."""
    h, w = mask.shape
    if framing == "full":
        return image, mask
    if framing == "square":
        side = min(h, w)
        y, x = (h - side) // 2, (w - side) // 2
        box = (slice(y, y + side), slice(x, x + side))
    else:
        ys, xs = np.nonzero(mask)
        if ys.size == 0:
            return image, mask
        margin = round(TIGHT_MARGIN * max(np.ptp(ys) + 1, np.ptp(xs) + 1))
        box = (
            slice(max(0, int(ys.min()) - margin), min(h, int(ys.max()) + 1 + margin)),
            slice(max(0, int(xs.min()) - margin), min(w, int(xs.max()) + 1 + margin)),
        )
    return np.ascontiguousarray(image[box]), np.ascontiguousarray(mask[box])


def appendages(mask: npt.NDArray[np.bool_], share: float = 0.08) -> npt.NDArray[np.bool_]:
    """The mask's thin parts (a handle, a strap, a stem, a lid's knob): what an opening with a
    disc of ``share`` of the square root of the mask's area takes away. One rule for every
    photo; these are the parts that a cut-out loses first."""
    area = float(mask.sum())
    radius = max(1, round(share * area**0.5))
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
    body = cv2.morphologyEx(mask.view(np.uint8), cv2.MORPH_OPEN, disc) > 0
    thin: npt.NDArray[np.bool_] = mask & ~body
    return thin


def interior(mask: npt.NDArray[np.bool_], radius: int) -> npt.NDArray[np.bool_]:
    """The mask eroded by ``radius`` px (where a cut-out's alpha should be 1)."""
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
    inner: npt.NDArray[np.bool_] = cv2.erode(mask.view(np.uint8), disc) > 0
    return inner


def scores(
    alpha: npt.NDArray[np.float32], mask: npt.NDArray[np.bool_], band: int
) -> dict[str, float]:
    """IoU (alpha > 0.5), the share of the thin parts' pixels that are opaque (alpha >= 0.9;
    NaN when the mask has under 0.5 % of its area in thin parts) and the share of the interior
    (``band`` px inside the mask's edge) left partly transparent (0.02 < alpha < 0.98)."""
    cut = alpha > 0.5
    union = float((cut | mask).sum())
    thin = appendages(mask)
    inner = interior(mask, band)
    kept = float((alpha[thin] >= 0.9).mean()) if thin.sum() >= 0.005 * mask.sum() else np.nan
    semi = (alpha[inner] > 0.02) & (alpha[inner] < 0.98)
    return {
        "iou": float((cut & mask).sum()) / max(union, 1.0),
        "parts kept": kept,
        "interior partial %": 100 * float(semi.mean()) if inner.any() else np.nan,
    }


def each(corpus: list[Sample], per_half: int = 0) -> Iterator[Sample]:
    """The samples, at most ``per_half`` of each half (0: all), spread over the groups (round
    robin by group, each group in id order), so a subsample still covers every product type."""
    for half in ("tune", "report"):
        chosen = [s for s in corpus if s.half == half]
        if per_half and len(chosen) > per_half:
            by_group: dict[str, list[Sample]] = {}
            for s in chosen:
                by_group.setdefault(s.group, []).append(s)
            picked: list[Sample] = []
            queues = [list(v) for _, v in sorted(by_group.items())]
            while len(picked) < per_half:
                for q in queues:
                    if q and len(picked) < per_half:
                        picked.append(q.pop(0))
            chosen = sorted(picked, key=lambda s: s.id)
        yield from chosen


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        raise SystemExit("usage: cutout_masks.py CORPUS_DIR")
    corpus = samples(Path(argv[0]))
    print(f"{len(corpus)} photos with masks")
    counts = Counter((s.source, s.half, s.group) for s in corpus)
    for (source, half, group), n in sorted(counts.items()):
        print(f"{source:16} {half:7} {group:28} {n}")


if __name__ == "__main__":
    main(sys.argv[1:])
