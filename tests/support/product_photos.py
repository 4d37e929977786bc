"""A labelled set of product photos for the category classifier (``bench/bench_classify.py``,
tests/engines/analyze/test_category.py).

No product-photo set with bundled images is installed, so most photos are drawn here: a
silhouette per product kind (T-shirt, dress, trousers, hoodie, bottle, jar, can, shoe, bag, mug,
ring, necklace, watch, phone, laptop, chair, lamp), filled with a varied colour, shaded, given
fabric or gloss texture, a soft floor shadow and a light studio background, at a random size,
position and tilt. scikit-image's real photos add the hard ``other`` cases (a portrait, a cup, a
cat, a rocket). The set is deterministic (one seed) and needs no download.

Drawn products are easier than real ones (clean outlines, no props), and the classifier's rules
were written by the same team that drew them: figures on this set are an upper bound, stated so
wherever they are reported."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]
Poly = list[tuple[float, float]]

SIZE = 512


@dataclass(frozen=True)
class Sample:
    name: str
    label: str  # the spec's vocabulary
    image: Image


def _tshirt(r: np.random.Generator) -> list[Poly]:
    s = r.uniform(0.28, 0.36)  # sleeve end height
    return [
        [
            (0.38, 0.04), (0.45, 0.10), (0.55, 0.10), (0.62, 0.04), (0.86, 0.12), (1.0, s),
            (0.84, s + 0.09), (0.79, 0.30), (0.80, 1.0), (0.20, 1.0), (0.21, 0.30),
            (0.16, s + 0.09), (0.0, s), (0.14, 0.12),
        ]
    ]  # fmt: skip


def _hoodie(r: np.random.Generator) -> list[Poly]:
    cuff = r.uniform(0.82, 0.95)
    return [
        [
            (0.40, 0.0), (0.60, 0.0), (0.66, 0.10), (0.84, 0.16), (0.98, cuff - 0.05),
            (1.0, cuff), (0.88, cuff + 0.03), (0.78, 0.40), (0.78, 1.0), (0.22, 1.0),
            (0.22, 0.40), (0.12, cuff + 0.03), (0.0, cuff), (0.02, cuff - 0.05), (0.16, 0.16),
            (0.34, 0.10),
        ]
    ]  # fmt: skip


def _dress(r: np.random.Generator) -> list[Poly]:
    hem = r.uniform(0.0, 0.12)
    return [
        [
            (0.36, 0.0), (0.44, 0.07), (0.56, 0.07), (0.64, 0.0), (0.68, 0.05), (0.66, 0.28),
            (0.61, 0.40), (1.0 - hem, 1.0), (hem, 1.0), (0.39, 0.40), (0.34, 0.28), (0.32, 0.05),
        ]
    ]  # fmt: skip


def _trousers(r: np.random.Generator) -> list[Poly]:
    crotch = r.uniform(0.30, 0.42)
    flare = r.uniform(0.0, 0.06)
    return [
        [
            (0.12, 0.0), (0.88, 0.0), (0.92, 0.25), (1.0 + flare - 0.06, 1.0), (0.56, 1.0),
            (0.50, crotch), (0.44, 1.0), (0.06 - flare, 1.0), (0.08, 0.25),
        ]
    ]  # fmt: skip


def _wine_bottle(r: np.random.Generator) -> list[Poly]:
    neck = r.uniform(0.30, 0.40)
    return [
        [
            (0.40, 0.0), (0.60, 0.0), (0.60, neck), (0.95, neck + 0.15), (0.95, 1.0),
            (0.05, 1.0), (0.05, neck + 0.15), (0.40, neck),
        ]
    ]  # fmt: skip


def _pump_bottle(r: np.random.Generator) -> list[Poly]:
    return [
        [(0.44, 0.0), (0.80, 0.0), (0.80, 0.05), (0.56, 0.05), (0.56, 0.16), (0.44, 0.16)],
        [(0.35, 0.16), (0.65, 0.16), (0.65, 0.24), (0.35, 0.24)],
        [(0.10, 0.26), (0.90, 0.26), (0.92, 1.0), (0.08, 1.0)],
    ]  # fmt: skip


def _dropper(r: np.random.Generator) -> list[Poly]:
    return [
        _ellipse(0.5, 0.09, 0.13, 0.09),
        [(0.34, 0.16), (0.66, 0.16), (0.66, 0.34), (0.34, 0.34)],
        [(0.15, 0.36), (0.85, 0.36), (0.88, 0.42), (0.88, 1.0), (0.12, 1.0), (0.12, 0.42)],
    ]  # fmt: skip


def _jar(r: np.random.Generator) -> list[Poly]:
    return [
        [(0.05, 0.0), (0.95, 0.0), (0.95, 0.25), (0.05, 0.25)],
        [(0.0, 0.27), (1.0, 0.27), (1.0, 1.0), (0.0, 1.0)],
    ]


def _can(r: np.random.Generator) -> list[Poly]:
    return [
        [(0.10, 0.0), (0.90, 0.0), (1.0, 0.06), (1.0, 0.94), (0.90, 1.0), (0.10, 1.0),
         (0.0, 0.94), (0.0, 0.06)],
    ]  # fmt: skip


def _shoe(r: np.random.Generator) -> list[Poly]:
    collar = r.uniform(0.0, 0.3)
    return [
        [
            (0.04, collar), (0.30, collar + 0.05), (0.42, 0.45), (0.70, 0.55), (0.92, 0.66),
            (1.0, 0.80), (1.0, 1.0), (0.0, 1.0), (0.0, 0.60),
        ]
    ]  # fmt: skip


def _bag(r: np.random.Generator) -> list[Poly]:
    return [
        _ring_poly(0.5, 0.30, 0.26, 0.28, 0.20, 0.22, top_only=True),
        [(0.12, 0.29), (0.88, 0.29), (1.0, 1.0), (0.0, 1.0)],
    ]


def _mug(r: np.random.Generator) -> list[Poly]:
    return [
        [(0.0, 0.0), (0.70, 0.0), (0.70, 1.0), (0.0, 1.0)],
        _ring_poly(0.72, 0.45, 0.26, 0.28, 0.15, 0.17, top_only=False, right_only=True),
    ]


def _ring(r: np.random.Generator) -> list[Poly]:
    return [_ring_poly(0.5, 0.58, 0.42, 0.42, 0.33, 0.33), _ellipse(0.5, 0.12, 0.12, 0.11)]


def _necklace(r: np.random.Generator) -> list[Poly]:
    return [
        _ring_poly(0.5, 0.35, 0.45, 0.55, 0.42, 0.52, top_only=False, bottom_only=True),
        _ellipse(0.5, 0.93, 0.07, 0.07),
    ]


def _watch(r: np.random.Generator) -> list[Poly]:
    return [
        [(0.33, 0.0), (0.67, 0.0), (0.67, 1.0), (0.33, 1.0)],
        _ellipse(0.5, 0.5, 0.30, 0.22),
    ]


def _phone(r: np.random.Generator) -> list[Poly]:
    return [[(0.02, 0.0), (0.98, 0.0), (1.0, 0.03), (1.0, 0.97), (0.98, 1.0), (0.02, 1.0),
             (0.0, 0.97), (0.0, 0.03)]]  # fmt: skip


def _laptop(r: np.random.Generator) -> list[Poly]:
    return [
        [(0.12, 0.0), (0.88, 0.0), (0.88, 0.70), (0.12, 0.70)],
        [(0.10, 0.72), (0.90, 0.72), (1.0, 0.96), (1.0, 1.0), (0.0, 1.0), (0.0, 0.96)],
    ]


def _chair(r: np.random.Generator) -> list[Poly]:
    return [
        [(0.08, 0.0), (0.92, 0.0), (0.92, 0.50), (0.08, 0.50)],
        [(0.0, 0.50), (1.0, 0.50), (1.0, 0.60), (0.0, 0.60)],
        [(0.04, 0.60), (0.12, 0.60), (0.10, 1.0), (0.04, 1.0)],
        [(0.88, 0.60), (0.96, 0.60), (0.96, 1.0), (0.90, 1.0)],
        [(0.24, 0.60), (0.30, 0.60), (0.30, 0.92), (0.25, 0.92)],
        [(0.70, 0.60), (0.76, 0.60), (0.75, 0.92), (0.70, 0.92)],
    ]


def _lamp(r: np.random.Generator) -> list[Poly]:
    return [
        [(0.25, 0.0), (0.75, 0.0), (1.0, 0.35), (0.0, 0.35)],
        [(0.46, 0.35), (0.54, 0.35), (0.54, 0.92), (0.46, 0.92)],
        _ellipse(0.5, 0.95, 0.30, 0.05),
    ]


def _ellipse(cx: float, cy: float, rx: float, ry: float, n: int = 48) -> Poly:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return [(cx + rx * float(np.cos(a)), cy + ry * float(np.sin(a))) for a in t]


def _ring_poly(
    cx: float,
    cy: float,
    rx: float,
    ry: float,
    ix: float,
    iy: float,
    *,
    top_only: bool = False,
    bottom_only: bool = False,
    right_only: bool = False,
) -> Poly:
    """An annulus (or its top, bottom or right half) as one polygon: outer arc, inner arc back."""
    lo, hi = 0.0, 2 * np.pi
    if top_only:
        lo, hi = np.pi, 2 * np.pi
    elif bottom_only:
        lo, hi = 0.0, np.pi
    elif right_only:
        lo, hi = -np.pi / 2, np.pi / 2
    t = np.linspace(lo, hi, 40)
    outer = [(cx + rx * float(np.cos(a)), cy + ry * float(np.sin(a))) for a in t]
    inner = [(cx + ix * float(np.cos(a)), cy + iy * float(np.sin(a))) for a in t[::-1]]
    return outer + inner


@dataclass(frozen=True)
class Kind:
    name: str
    label: str
    shape: Callable[[np.random.Generator], list[Poly]]
    aspect: tuple[float, float]  # height / width of the drawn box
    finish: str  # fabric, gloss, matte, metal, dark


KINDS: tuple[Kind, ...] = (
    Kind("tshirt", "clothing", _tshirt, (0.95, 1.1), "fabric"),
    Kind("hoodie", "clothing", _hoodie, (1.0, 1.15), "fabric"),
    Kind("dress", "clothing", _dress, (1.5, 1.9), "fabric"),
    Kind("trousers", "clothing", _trousers, (1.6, 2.0), "fabric"),
    Kind("wine-bottle", "food", _wine_bottle, (3.0, 3.6), "gloss"),
    Kind("can", "food", _can, (1.7, 1.9), "metal"),
    Kind("pump-bottle", "cosmetics", _pump_bottle, (2.0, 2.6), "gloss"),
    Kind("dropper", "cosmetics", _dropper, (2.2, 2.8), "gloss"),
    Kind("cream-jar", "cosmetics", _jar, (0.55, 0.7), "matte"),
    Kind("shoe", "shoes", _shoe, (0.45, 0.6), "matte"),
    Kind("bag", "bags", _bag, (0.9, 1.1), "matte"),
    Kind("mug", "other", _mug, (0.8, 0.9), "gloss"),
    Kind("ring", "jewelry", _ring, (1.05, 1.15), "metal"),
    Kind("necklace", "jewelry", _necklace, (1.1, 1.3), "metal"),
    Kind("watch", "watches", _watch, (2.2, 2.8), "metal"),
    Kind("phone", "electronics", _phone, (1.9, 2.1), "dark"),
    Kind("laptop", "electronics", _laptop, (0.6, 0.7), "dark"),
    Kind("chair", "furniture", _chair, (1.2, 1.5), "matte"),
    Kind("lamp", "furniture", _lamp, (1.3, 1.6), "matte"),
)


def _colour(r: np.random.Generator, finish: str) -> npt.NDArray[np.float32]:
    if finish == "dark":
        return np.asarray(r.uniform(15, 60, 3), np.float32)
    if finish == "metal":
        gold = r.random() < 0.5
        base = [212, 175, 55] if gold else [192, 192, 200]
        return np.asarray(base, np.float32) * np.float32(r.uniform(0.8, 1.05))
    hsv = np.asarray([[[r.integers(0, 180), r.integers(80, 255), r.integers(60, 230)]]], np.uint8)
    return np.asarray(cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)[0, 0], np.float32)


def render(kind: Kind, r: np.random.Generator) -> Image:
    """One photo of ``kind``: light background, floor shadow, shaded and textured product."""
    bg = np.float32(r.uniform(225, 252))
    canvas = np.full((SIZE, SIZE, 3), bg, np.float32)
    canvas *= np.linspace(1.0, r.uniform(0.9, 1.0), SIZE, dtype=np.float32)[:, None, None]
    aspect = r.uniform(*kind.aspect)
    fill = r.uniform(0.55, 0.8)
    bh = fill * SIZE if aspect >= 1 else fill * SIZE * aspect
    bw = bh / aspect
    x0 = (SIZE - bw) / 2 + r.uniform(-0.08, 0.08) * SIZE
    y0 = (SIZE - bh) / 2 + r.uniform(-0.05, 0.05) * SIZE
    mask = np.zeros((SIZE, SIZE), np.uint8)
    mirror = kind.name == "shoe" and r.random() < 0.5
    for poly in kind.shape(r):
        pts = [((1 - px) if mirror else px, py) for px, py in poly]
        arr = np.asarray([[x0 + px * bw, y0 + py * bh] for px, py in pts], np.float32)
        cv2.fillPoly(mask, [np.round(arr * 4).astype(np.int32)], 255, cv2.LINE_AA, shift=2)
    angle = r.uniform(-6, 6)
    rot = cv2.getRotationMatrix2D((SIZE / 2, SIZE / 2), angle, 1.0)
    mask = np.asarray(cv2.warpAffine(mask, rot, (SIZE, SIZE)), np.uint8)
    alpha = mask.astype(np.float32)[..., None] / 255
    # floor shadow: the silhouette squashed under the product, blurred
    ys, xs = np.nonzero(mask > 127)
    bottom = int(ys.max())
    shadow = np.zeros_like(mask)
    cv2.ellipse(
        shadow,
        (int(xs.mean()), min(SIZE - 2, bottom)),
        (int((xs.max() - xs.min()) * 0.5), max(3, int(bh * 0.04))),
        0, 0, 360, 255, -1,
    )  # fmt: skip
    shadow_a = np.asarray(cv2.GaussianBlur(shadow, (0, 0), 9), np.float32)[..., None] / 255
    canvas *= 1 - 0.35 * shadow_a
    colour = _colour(r, kind.finish)
    shade = np.linspace(1.1, 0.8, SIZE, dtype=np.float32)
    if r.random() < 0.5:
        shade = shade[::-1]
    body = np.broadcast_to(colour, (SIZE, SIZE, 3)) * shade[None, :, None]
    if kind.finish == "fabric":
        noise = cv2.GaussianBlur(r.normal(0, 1, (SIZE, SIZE)).astype(np.float32), (0, 0), 1.2)
        body = body * (1 + 0.06 * noise[..., None])
        if r.random() < 0.3:  # stripes
            stripes = (np.arange(SIZE) // 18 % 2).astype(np.float32)
            body = body * (1 - 0.25 * stripes[:, None, None])
    elif kind.finish in ("gloss", "metal", "dark"):
        hx = int(xs.min() + (xs.max() - xs.min()) * r.uniform(0.2, 0.35))
        highlight = np.zeros((SIZE, SIZE), np.float32)
        cv2.line(highlight, (hx, int(ys.min())), (hx, bottom), 1.0, max(3, int(bw * 0.05)))
        highlight = np.asarray(cv2.GaussianBlur(highlight, (0, 0), 5), np.float32)
        body = body + 90 * highlight[..., None]
    out = canvas * (1 - alpha) + body * alpha
    out += r.normal(0, 1.5, out.shape).astype(np.float32)
    return np.asarray(np.clip(out, 0, 255), np.uint8)


def _real_photos() -> Iterator[Sample]:
    from skimage import data

    yield Sample("astronaut-portrait", "other", data.astronaut())  # type: ignore[no-untyped-call]
    yield Sample("coffee-cup", "other", data.coffee())  # type: ignore[no-untyped-call]
    yield Sample("cat", "other", data.chelsea())  # type: ignore[no-untyped-call]
    yield Sample("rocket", "other", data.rocket())  # type: ignore[no-untyped-call]


def samples(per_kind: int = 3, seed: int = 7) -> list[Sample]:
    """``per_kind`` drawn photos of every kind plus the real photos, in a fixed order."""
    r = np.random.default_rng(seed)
    out = [
        Sample(f"{kind.name}-{i + 1}", kind.label, render(kind, r))
        for kind in KINDS
        for i in range(per_kind)
    ]
    return out + list(_real_photos())


if __name__ == "__main__":  # a contact sheet of the set, to look at
    import sys

    from PIL import Image as PILImage

    items = samples(1)
    thumbs = [cv2.resize(s.image, (128, 128), interpolation=cv2.INTER_AREA) for s in items]
    cols = 8
    rows = -(-len(thumbs) // cols)
    sheet = np.full((rows * 128, cols * 128, 3), 255, np.uint8)
    for i, t in enumerate(thumbs):
        sheet[i // cols * 128 : (i // cols + 1) * 128, i % cols * 128 : (i % cols + 1) * 128] = t
    PILImage.fromarray(sheet).save(sys.argv[1] if len(sys.argv) > 1 else "product-photos.jpg")
