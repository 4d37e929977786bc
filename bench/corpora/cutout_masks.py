"""The cut-out corpus (issue 62 item 1): photos with ground-truth masks from outside sources,
kept out of the repository (``docs/corpora-cutouts.md`` has the sources and their terms), read
from a folder (:data:`CORPUS_DIR` by default).

- **DAVIS 2016 validation** (the one source reachable from this project's machines): every
  tenth frame of its 20 sequences, 141 photos with their object's mask (animals, people,
  vehicles: a bike and rider, a scooter, a kite surfer's kite). ``python
  bench/corpora/cutout_masks.py fetch [--mirror GIT_DIR]`` copies them from a public
  repository that carries the set (:data:`DAVIS_REPO`, pinned), or from a local git mirror of
  it.
- **Other sets** laid out as DIS5K, DUTS-TE, ECSSD and HKU-IS unpack: each photo
  (``.jpg``/``.jpeg``/``.png``) has a mask of the same stem in a sibling folder whose name says
  so (``gt``, ``GT``, ``mask``, ``masks``, ``*-Mask``; the photos' folder is ``im``,
  ``images``, ``Image``, ``imgs``, ``*-Image``). A sample's id is ``<set>/<stem>`` (``<set>``:
  the folder above the photos' folder, e.g. ``DIS-TE1``).

- **Categories**: DAVIS's from :data:`DAVIS_CATEGORIES`; DIS5K names its photos
  ``<n>#<group>#<m>#<Category>#<id>.jpg``; otherwise ``categories.csv`` (``id,category``) at
  the corpus root, else ``uncategorised``. Categories are grouped into product types
  (:data:`GROUPS`: cups with handles, bags with straps, jars and bottles with lids, plants...).
- **Split**: a DAVIS sequence goes wholly to one half (its frames are near copies), the
  sequences alternately in the order of the SHA-256 of their ids; any other photo by the
  SHA-256 of its id (even first byte ``tune``, odd ``report``). Never tune on ``report``.
- **Framings**: the photo as it is (``full``), its centred largest square (``square``) and a
  tight crop to the mask's box with 3 % of its long side around it (``tight``: the subject
  touching or nearly touching the frame).

``python bench/corpora/cutout_masks.py [DIR]`` lists what it finds per set, half and group.
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
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

CORPUS_DIR = (
    Path(os.environ.get("PIXELMILL_CORPUS_DIR", Path.home() / ".cache" / "pixelmill-corpora"))
    / "cutouts"
)
"""Where :func:`fetch` puts the corpus (outside the repository: ``PIXELMILL_CORPUS_DIR``)."""

DAVIS_REPO = "MathLee/EOR-VOS"
DAVIS_COMMIT = "1bde4d5f936304c5ad69e301956e9d65082dfbc8"
"""A public repository that carries the DAVIS 2016 validation set (20 sequences, 1,376 frames
at 480p with their object masks) in ``DAVIS/JPEGImages/480p`` and ``DAVIS/Annotations/480p``,
pinned to the commit that was measured."""
DAVIS_EVERY = 10
"""Every tenth frame of each sequence is a sample (frames 0, 10, 20...): 145 photos."""
DAVIS_FILES = (("JPEGImages", "jpg"), ("Annotations", "png"))
"""Where a DAVIS frame's photo and mask are (``DAVIS/<folder>/480p/<sequence>/<n>.<ext>``)."""
DAVIS_CATEGORIES = {
    "blackswan": "swan (animal)",
    "bmx-trees": "bike and rider",
    "breakdance": "dancer (person)",
    "camel": "camel (animal)",
    "car-roundabout": "car",
    "car-shadow": "car",
    "cows": "cow (animal)",
    "dance-twirl": "dancer (person)",
    "dog": "dog",
    "drift-chicane": "car",
    "drift-straight": "car",
    "goat": "goat (animal)",
    "horsejump-high": "horse and rider",
    "kite-surf": "kite surfer (person)",
    "libby": "dog",
    "motocross-jump": "motorcycle and rider",
    "paragliding-launch": "paraglider (person)",
    "parkour": "runner (person)",
    "scooter-black": "motorcycle and rider",
    "soapbox": "soapbox cart and riders",
}
"""DAVIS 2016 validation sequences and what their mask covers."""

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


def davis_halves(sequences: list[str]) -> dict[str, Half]:
    """Each DAVIS sequence's half: the sequences in the order of the SHA-256 of their ids,
    alternately ``tune`` and ``report`` (a sequence's frames are near copies of each other,
    so a whole sequence goes to one half, and the halves are even)."""
    ranked = sorted(sequences, key=lambda q: hashlib.sha256(f"DAVIS/{q}".encode()).hexdigest())
    return {q: ("tune" if i % 2 == 0 else "report") for i, q in enumerate(ranked)}


def davis_samples(root: Path, every: int = DAVIS_EVERY) -> list[Sample]:
    """The frames of each DAVIS sequence under ``root`` (a ``JPEGImages/<res>`` folder beside
    an ``Annotations/<res>`` one) whose number is a multiple of ``every``, with a mask."""
    out: list[Sample] = []
    for images in sorted(root.rglob("JPEGImages")):
        for res in sorted(p for p in images.iterdir() if p.is_dir()):
            masks = images.parent / "Annotations" / res.name
            sequences = sorted(p.name for p in res.iterdir() if p.is_dir())
            halves = davis_halves(sequences)
            for seq in sequences:
                frames = sorted((res / seq).glob("*.jpg"))
                for frame_path in (
                    f for f in frames if f.stem.isdigit() and int(f.stem) % every == 0
                ):
                    mask = masks / seq / f"{frame_path.stem}.png"
                    if not mask.is_file():
                        continue
                    category = DAVIS_CATEGORIES.get(seq, seq)
                    out.append(
                        Sample(
                            f"DAVIS/{seq}/{frame_path.stem}",
                            "DAVIS",
                            category,
                            group_of(category),
                            halves[seq],
                            frame_path,
                            mask,
                        )
                    )
    return out


def samples(root: Path) -> list[Sample]:
    """Every photo under ``root`` that has a mask, sorted by id."""
    listed = _listed(root)
    out: dict[str, Sample] = {s.id: s for s in davis_samples(root)}
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


def fetch(dest: Path = CORPUS_DIR, mirror: Path | None = None, commit: str = DAVIS_COMMIT) -> Path:
    """The DAVIS 2016 validation frames that :func:`davis_samples` reads (every
    ``DAVIS_EVERY``-th, with their masks) into ``dest/DAVIS``, from a local git ``mirror`` of
    :data:`DAVIS_REPO` or downloaded, at ``commit``; files already there are kept."""
    for seq in DAVIS_CATEGORIES:
        # The longest sequence has 104 frames; a sequence ends at its first missing frame.
        for number in range(0, 200, DAVIS_EVERY):
            pair = [f"DAVIS/{kind}/480p/{seq}/{number:05d}.{ext}" for kind, ext in DAVIS_FILES]
            if all((dest / rel).is_file() for rel in pair):
                continue
            blobs = [_read(rel, mirror, commit) for rel in pair]
            if blobs[0] is None:
                break
            for rel, blob in zip(pair, blobs, strict=True):
                if blob is not None:
                    (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                    (dest / rel).write_bytes(blob)
    return dest


def _read(rel: str, mirror: Path | None, commit: str) -> bytes | None:
    """A file of :data:`DAVIS_REPO` at ``commit`` (None when it has no such file)."""
    if mirror is not None:
        done = subprocess.run(
            ["git", "-C", str(mirror), "show", f"{commit}:{rel}"],
            check=False,
            capture_output=True,
        )
        return done.stdout if done.returncode == 0 else None
    url = f"https://raw.githubusercontent.com/{DAVIS_REPO}/{commit}/{rel}"
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return bytes(r.read())
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return None
        raise


def main(argv: list[str]) -> None:
    if argv[:1] == ["fetch"]:
        mirror = Path(argv[argv.index("--mirror") + 1]) if "--mirror" in argv else None
        print(f"fetched into {fetch(CORPUS_DIR, mirror)}")
        return
    if len(argv) > 1:
        raise SystemExit("usage: cutout_masks.py [CORPUS_DIR] | fetch [--mirror GIT_DIR]")
    corpus = samples(Path(argv[0]) if argv else CORPUS_DIR)
    print(f"{len(corpus)} photos with masks")
    counts = Counter((s.source, s.half, s.group) for s in corpus)
    for (source, half, group), n in sorted(counts.items()):
        print(f"{source:16} {half:7} {group:28} {n}")


if __name__ == "__main__":
    main(sys.argv[1:])
