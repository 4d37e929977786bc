"""The text-removal corpus: overlay pairs on photos from outside sources, split by source image.

Sources (licences in ``docs/corpora-text.md``):

- scikit-image's bundled samples (in the wheel, no download; CC0 / public domain);
- matplotlib's ``grace_hopper.jpg`` (in the wheel; public domain, US Navy);
- eleven scene-text photos (signs, shop fronts, a projector's printed label) from OpenCV's
  ``opencv_contrib`` repository, ``modules/text/samples`` (Apache-2.0 repository; the photos'
  own provenance is not stated, so they are not committed: :func:`fetch` downloads them, or
  copies them from a local git mirror, into the corpus folder).

Every pair is drawn deterministically from its source id and index (no global random state):
the same code gives the same pairs on every machine. Kinds: ``plain`` (opaque text, two lines,
one of :data:`FONTS` (14 faces) in one of :data:`COLOURS`, over the flattest or the busiest
ground, every third pair with its lines touching), ``caption`` (opaque text with an outline or
a drop shadow), ``logo`` (a badge with text), ``watermark`` (semi-transparent text),
``tiled`` (a semi-transparent mark repeated over the image), ``carton`` (a caption beside a
carton whose printed brand belongs to the photo) and ``none`` (the photo as it is). Scene-text
photos carry their own text too: its boxes (OCR on the clean photo) are where the photo's own
text must be kept.

Split: a source image goes wholly to the ``tune`` or the ``report`` half: the sources in the
order of the SHA-256 of their ids, alternately, those with text of their own apart
(:func:`split_of`); standard sets (:data:`STANDARD`) go to ``report`` always.

Run ``python bench/corpora/text_overlays.py fetch [--mirror DIR]`` to fetch the scene-text
photos, ``... sheet OUT.png`` for a look at some pairs.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, cast

import cv2
import numpy as np
import numpy.typing as npt
from PIL import Image, ImageDraw, ImageFont

U8 = npt.NDArray[np.uint8]
Box = tuple[int, int, int, int]  # x0, y0, x1, y1 (exclusive)

CORPUS_DIR = Path(
    os.environ.get("PIXELMILL_CORPUS_DIR", Path.home() / ".cache" / "pixelmill-corpora")
)
OPENCV_CONTRIB = "opencv/opencv_contrib"
OPENCV_COMMIT = "2a5154a4479e841aa1282ef83d139c4870d17b8f"
SCENE_FILES = (
    *(f"scenetext0{i}" for i in range(1, 7)),
    *(f"scenetext_segmented_word0{i}" for i in range(1, 6)),
)
"""``modules/text/samples/NAME.jpg`` in :data:`OPENCV_CONTRIB` at :data:`OPENCV_COMMIT`."""

SKIMAGE = (
    "astronaut",
    "brick",
    "camera",
    "cat",
    "cell",
    "clock",
    "coffee",
    "coins",
    "grass",
    "gravel",
    "hubble_deep_field",
    "immunohistochemistry",
    "moon",
    "retina",
    "rocket",
    "text",
    "stereo_motorcycle",
)
STANDARD = frozenset({"skimage/stereo_motorcycle"})
"""Standard benchmark sets (Middlebury 2014's motorcycle): report half only. The scene-text
photos are split like the rest: without some of them in the tune half no rule for keeping a
photo's own text could be chosen there."""
OWN_TEXT = frozenset({"skimage/text", *(f"opencv/{n}" for n in SCENE_FILES)})
"""Sources whose photo carries text of its own (to be kept)."""
ALL_SOURCES = (
    *(f"skimage/{n}" for n in SKIMAGE),
    "matplotlib/grace_hopper",
    *(f"opencv/{n}" for n in SCENE_FILES),
)

FONT_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/truetype/liberation"))
FONTS = (
    "DejaVuSans-Bold.ttf",
    "DejaVuSans-BoldOblique.ttf",
    "DejaVuSansCondensed-Bold.ttf",
    "DejaVuSansCondensed-BoldOblique.ttf",
    "DejaVuSans.ttf",
    "DejaVuSerif-Bold.ttf",
    "DejaVuSerif-BoldItalic.ttf",
    "DejaVuSansMono-Bold.ttf",
    "LiberationSans-Bold.ttf",
    "LiberationSans-BoldItalic.ttf",
    "LiberationSansNarrow-Bold.ttf",
    "LiberationSerif-Bold.ttf",
    "LiberationMono-Bold.ttf",
    "LiberationSans-Regular.ttf",
)
"""The faces the project installs (DejaVu: ``engines/runtime/fonts.py``; Liberation beside it)."""
COLOURS: dict[str, tuple[int, int, int]] = {
    "white": (255, 255, 255),
    "black": (0, 0, 0),
    "yellow": (255, 221, 0),
    "red": (220, 30, 30),
    "blue": (30, 80, 220),
    "green": (30, 160, 60),
}
LINES = (
    ("SALE 50% OFF", "(c) stockphoto"),
    ("NEW ARRIVAL", "Summer Collection"),
    ("FREE SHIPPING", "shop now"),
    ("LIMITED EDITION", "only 9.99"),
    ("BEST PRICE", "www.example.com"),
    ("HOT DEAL", "Photo by J. Doe"),
    ("Made in Italy", "since 1987"),
    ("SPECIAL OFFER", "today only"),
    ("Fresh & Local", "order online"),
    ("GRAND OPENING", "Saturday 10am"),
)
MARKS = ("SAMPLE", "PREVIEW", "(c) pixel stock", "DRAFT", "watermark", "PROOF")
BRANDS = ("NORDA", "Kaffeo", "LUMEN", "Bramble", "OXA TEA", "Veloce")
KINDS = (
    "plain",
    "plain",
    "caption",
    "watermark",
    "plain",
    "logo",
    "tiled",
    "plain",
    "carton",
    "caption",
    "plain",
    "watermark",
    "none",
)
"""Pair ``i`` of a source has kind ``KINDS[i]``: 13 pairs per source."""
SIDE = 384
"""Sources are scaled so their longer side is this (CPU is scarce); crops are 70-100 % of it."""


@dataclass
class Pair:
    id: str
    source: str
    split: str  # tune | report
    kind: str
    clean: U8
    observed: U8
    overlay: npt.NDArray[np.bool_]  # where the overlay changed the photo
    boxes: list[Box] = field(default_factory=list)  # the overlay's text boxes
    own: list[Box] = field(default_factory=list)  # the photo's own text boxes (keep)
    notes: str = ""


def _hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def split_of(source: str) -> str:
    """``tune`` or ``report``: the sources in the order of their ids' SHA-256, taken in turn
    (tune, report, tune, ...), photos with text of their own and the others apart, so the
    halves are even whatever the hashes."""
    if source in STANDARD:
        return "report"
    group = [
        s for s in ALL_SOURCES if s not in STANDARD and (s in OWN_TEXT) == (source in OWN_TEXT)
    ]
    others = sorted(group, key=_hash)
    if source not in others:
        return "report"
    return "tune" if others.index(source) % 2 == 0 else "report"


def _rng(*parts: object) -> np.random.Generator:
    seed = int.from_bytes(hashlib.sha256("/".join(map(str, parts)).encode()).digest()[:8], "big")
    return np.random.default_rng(seed)


def _font(name: str, size: int) -> ImageFont.FreeTypeFont:
    for d in FONT_DIRS:
        if (d / name).is_file():
            return ImageFont.truetype(str(d / name), size)
    raise FileNotFoundError(name)


# ---- sources ------------------------------------------------------------------------------------


def fetch(dest: Path = CORPUS_DIR, mirror: Path | None = None) -> Path:
    """The scene-text photos into ``dest/opencv`` (from a git ``mirror`` of opencv_contrib if
    given, else from GitHub at :data:`OPENCV_COMMIT`)."""
    out = dest / "opencv"
    out.mkdir(parents=True, exist_ok=True)
    for name in SCENE_FILES:
        path = out / f"{name}.jpg"
        if path.exists():
            continue
        rel = f"modules/text/samples/{name}.jpg"
        if mirror is not None:
            blob = subprocess.run(
                ["git", "-C", str(mirror), "show", f"HEAD:{rel}"], check=True, capture_output=True
            ).stdout
        else:
            url = f"https://raw.githubusercontent.com/{OPENCV_CONTRIB}/{OPENCV_COMMIT}/{rel}"
            with urllib.request.urlopen(url, timeout=60) as r:
                blob = r.read()
        path.write_bytes(blob)
    return out


def _fit(img: U8) -> U8:
    if img.ndim == 2:
        img = np.repeat(img[..., None], 3, axis=2)
    img = np.ascontiguousarray(img[..., :3])
    h, w = img.shape[:2]
    s = SIDE / max(h, w)
    size = (max(8, round(w * s)), max(8, round(h * s)))
    return np.asarray(cv2.resize(img, size, interpolation=cv2.INTER_AREA), np.uint8)


def sources(root: Path = CORPUS_DIR) -> dict[str, U8]:
    """Source id -> RGB photo scaled to :data:`SIDE`; scene-text photos only if fetched."""
    from skimage import data as skdata

    out: dict[str, U8] = {}
    for name in SKIMAGE:
        img = getattr(skdata, name)()
        if isinstance(img, tuple):  # stereo_motorcycle: (left, right, disparity)
            img = img[0]
        out[f"skimage/{name}"] = _fit(np.asarray(img, np.uint8))
    import matplotlib.cbook

    sample = cast("IO[bytes]", matplotlib.cbook.get_sample_data("grace_hopper.jpg"))
    with sample as f:
        out["matplotlib/grace_hopper"] = _fit(np.asarray(Image.open(f).convert("RGB")))
    for name in SCENE_FILES:
        path = root / "opencv" / f"{name}.jpg"
        if path.exists():
            bgr = cv2.imread(str(path), cv2.IMREAD_COLOR)
            if bgr is not None:
                rgb = np.asarray(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), np.uint8)
                out[f"opencv/{name}"] = _fit(rgb)
    return out


def own_text_boxes(img: U8) -> list[Box]:
    """The photo's own text: the boxes of the lines PP-OCRv4 reads (the engine's OCR)."""
    from pixelmill.engines.runtime.ocr import read_text

    boxes = []
    for line in read_text(img):
        q = np.asarray(line.box)
        boxes.append(
            (int(q[:, 0].min()), int(q[:, 1].min()), int(q[:, 0].max()) + 1, int(q[:, 1].max()) + 1)
        )
    return boxes


# ---- drawing ----------------------------------------------------------------------------------


def _text_layer(
    size: tuple[int, int],
    lines: tuple[str, ...],
    font: ImageFont.FreeTypeFont,
    xy: tuple[int, int],
    gap: int,
    stroke: int = 0,
) -> tuple[Image.Image, list[Box]]:
    """A coverage layer ("L") with ``lines`` drawn from ``xy`` (outline ``stroke`` px), lines
    ``gap`` px apart (0: touching), and each line's box."""
    layer = Image.new("L", size, 0)
    d = ImageDraw.Draw(layer)
    x, y = xy
    boxes = []
    for text in lines:
        x0, t, r, b = (int(v) for v in d.textbbox((x, y), text, font=font, stroke_width=stroke))
        d.text((x, y), text, fill=255, font=font, stroke_width=stroke)
        boxes.append((x0, t, r, b))
        y = b + gap - (t - y)
    return layer, boxes


def _measure(lines: tuple[str, ...], font: ImageFont.FreeTypeFont, gap: int) -> tuple[int, int]:
    d = ImageDraw.Draw(Image.new("L", (1, 1)))
    ws, hs = [], []
    for text in lines:
        x0, _, r, b = (int(v) for v in d.textbbox((0, 0), text, font=font))
        ws.append(r - x0)
        hs.append(b)
    return max(ws), sum(hs) + gap * (len(lines) - 1)


def _place(
    img: U8,
    wh: tuple[int, int],
    rng: np.random.Generator,
    ground: str | None,
    avoid: list[Box] = (),  # type: ignore[assignment]
) -> tuple[int, int]:
    """Top-left for a ``wh`` block: random, or the flattest / busiest of 24 candidates; away
    from the boxes ``avoid`` (the photo's own text) where a candidate is."""
    h, w = img.shape[:2]
    bw, bh = min(wh[0], w - 2), min(wh[1], h - 2)
    cands = [(int(rng.integers(0, w - bw)), int(rng.integers(0, h - bh))) for _ in range(24)]
    free = [
        c for c in cands if not any(_hits((c[0], c[1], c[0] + bw, c[1] + bh), b) for b in avoid)
    ]
    cands = free or cands
    if ground is None:
        return cands[0]
    grey = img.astype(np.float32).mean(axis=2)
    std = [float(grey[y : y + bh, x : x + bw].std()) for x, y in cands]
    i = int(np.argmin(std)) if ground == "flat" else int(np.argmax(std))
    return cands[i]


def _blend(img: U8, cov: U8, colour: tuple[int, ...], opacity: float) -> U8:
    a = cov.astype(np.float32)[..., None] / 255.0 * opacity
    out = img.astype(np.float32) * (1 - a) + np.asarray(colour, np.float32) * a
    return np.asarray(np.clip(np.rint(out), 0, 255), np.uint8)


def _fit_font(
    name: str, lines: tuple[str, ...], width: int, height: int, gap: int
) -> ImageFont.FreeTypeFont:
    size = max(10, height)
    while size > 10:
        f = _font(name, size)
        bw, _ = _measure(lines, f, gap)
        if bw <= width:
            return f
        size = int(size * 0.9)
    return _font(name, size)


def _carton(img: U8, rng: np.random.Generator) -> tuple[U8, Box]:
    """Draw a carton with a printed brand into the photo (it belongs to the photo): a shaded
    box in perspective, its brand printed, warped and lit with the box; returns the box of the
    brand."""
    h, w = img.shape[:2]
    cw, ch = int(w * rng.uniform(0.28, 0.38)), int(h * rng.uniform(0.35, 0.5))
    face = np.zeros((ch, cw, 3), np.uint8)
    base = np.asarray(rng.integers(60, 230, 3), np.float32)
    shade = np.linspace(1.1, 0.8, cw, dtype=np.float32)[None, :, None]
    face[:] = np.clip(base[None, None] * shade, 0, 255).astype(np.uint8)
    brand = BRANDS[int(rng.integers(0, len(BRANDS)))]
    ink = (20, 20, 20) if base.mean() > 140 else (245, 245, 240)
    pil = Image.fromarray(face)
    d = ImageDraw.Draw(pil)
    f = _fit_font(FONTS[int(rng.integers(0, len(FONTS)))], (brand,), int(cw * 0.8), ch // 6, 0)
    x0, t, r, b = (int(v) for v in d.textbbox((0, 0), brand, font=f))
    tx, ty = (cw - (r - x0)) // 2 - x0, ch // 4
    d.text((tx, ty), brand, fill=ink, font=f)
    d.rectangle((cw // 8, ch * 2 // 3, cw * 7 // 8, ch * 2 // 3 + ch // 14), fill=ink)
    shaded = np.clip(np.asarray(pil, np.float32) * shade, 0, 255).astype(np.uint8)
    face = np.asarray(cv2.GaussianBlur(shaded, (0, 0), 0.7), np.uint8)
    x0, y0 = int(rng.integers(w // 2, w - cw - 4)), int(rng.integers(4, h - ch - 4))
    skew = cw * rng.uniform(0.05, 0.12)
    src = np.array([[0, 0], [cw, 0], [cw, ch], [0, ch]], np.float32)
    dst = np.array(
        [[x0, y0 + skew], [x0 + cw, y0], [x0 + cw, y0 + ch], [x0, y0 + ch - skew]], np.float32
    )
    m = cv2.getPerspectiveTransform(src, dst)
    warped = cv2.warpPerspective(face, m, (w, h), flags=cv2.INTER_LINEAR)
    mask = cv2.warpPerspective(np.full((ch, cw), 255, np.uint8), m, (w, h)) > 127
    out = img.copy()
    out[mask] = warped[mask]
    pts = cv2.perspectiveTransform(
        np.array(
            [[[tx + x0, ty + t], [tx + r, ty + t], [tx + r, ty + b], [tx + x0, ty + b]]], np.float32
        ),
        m,
    )[0]
    box = (
        int(pts[:, 0].min()),
        int(pts[:, 1].min()),
        int(pts[:, 0].max()) + 1,
        int(pts[:, 1].max()) + 1,
    )
    return out, box


def make_pair(source: str, photo: U8, i: int, own: list[Box]) -> Pair:
    """Pair ``i`` of ``source`` (kind ``KINDS[i % len(KINDS)]``), drawn from its own seed."""
    kind = KINDS[i % len(KINDS)]
    rng = _rng(source, i)
    h0, w0 = photo.shape[:2]
    if source in OWN_TEXT:  # keep the whole scene (its text) and its OCR boxes
        clean, x, y = photo, 0, 0
    else:
        s = rng.uniform(0.7, 1.0)
        ch, cw = max(64, int(h0 * s)), max(64, int(w0 * s))
        y, x = int(rng.integers(0, h0 - ch + 1)), int(rng.integers(0, w0 - cw + 1))
        clean = np.ascontiguousarray(photo[y : y + ch, x : x + cw])
    h, w = clean.shape[:2]
    own = list(own)
    pid = f"{source}#{i:02d}-{kind}"
    pair = Pair(pid, source, split_of(source), kind, clean, clean.copy(), np.zeros((h, w), bool))
    if kind == "none":
        pair.own = own
        return pair
    if kind == "carton":
        clean, brand_box = _carton(clean, rng)
        own.append(brand_box)
        pair.clean = clean
    font_name = FONTS[int(rng.integers(0, len(FONTS)))]
    colour_name = list(COLOURS)[int(rng.integers(0, len(COLOURS)))]
    colour = COLOURS[colour_name]
    lines = LINES[int(rng.integers(0, len(LINES)))]
    obs = clean.copy()
    boxes: list[Box] = []
    cover = np.zeros((h, w), np.uint8)
    if kind in ("plain", "caption", "carton"):
        touching = kind == "plain" and i % 3 == 0
        gap = 0 if touching else int(h * 0.02)
        width = int(w * (0.45 if kind == "carton" else rng.uniform(0.5, 0.85)))
        f = _fit_font(font_name, lines, width, int(min(h, w) * rng.uniform(0.07, 0.11)), gap)
        bw, bh = _measure(lines, f, gap)
        ground = ("flat", "busy")[i % 2] if kind == "plain" else None
        if kind == "carton":
            xy = (int(rng.integers(4, max(5, w // 2 - bw))), int(rng.integers(4, h - bh - 4)))
        else:
            xy = _place(clean, (bw, bh), rng, ground, own)
        stroke = 0
        if kind == "caption" and i % 2 == 0:
            stroke = max(1, int(f.size) // 14)
            outline, _ = _text_layer((w, h), lines, f, xy, gap, stroke)
            obs = _blend(
                obs, np.asarray(outline), (0, 0, 0) if sum(colour) > 300 else (255,) * 3, 1.0
            )
            cover |= np.asarray(outline)
        elif kind == "caption":
            off = max(1, int(f.size) // 12)
            shadow, _ = _text_layer((w, h), lines, f, (xy[0] + off, xy[1] + off), gap)
            sh = np.asarray(cv2.GaussianBlur(np.asarray(shadow), (0, 0), off * 0.6), np.uint8)
            obs = _blend(obs, sh, (0, 0, 0), 0.7)
            cover |= np.asarray(shadow)
        layer, boxes = _text_layer((w, h), lines, f, xy, gap)
        cov = np.asarray(layer)
        obs = _blend(obs, cov, colour, 1.0)
        cover |= cov
        pair.notes = f"{font_name} {colour_name} {f.size}px" + (" touching" if touching else "")
        if ground:
            pair.notes += f" {ground} ground"
    elif kind == "logo":
        r = int(min(h, w) * rng.uniform(0.1, 0.16))
        cx, cy = int(rng.integers(r + 2, w - r - 2)), int(rng.integers(r + 2, h - r - 2))
        badge = Image.new("L", (w, h), 0)
        d = ImageDraw.Draw(badge)
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=255)
        text = BRANDS[i % len(BRANDS)][:5]
        f = _fit_font(font_name, (text,), int(1.5 * r), r // 2, 0)
        x0, t, rr, b = d.textbbox((0, 0), text, font=f)
        tx, ty = cx - (rr - x0) // 2 - x0, cy - (b - t) // 2 - t
        glyph = Image.new("L", (w, h), 0)
        ImageDraw.Draw(glyph).text((tx, ty), text, fill=255, font=f)
        opacity = 1.0 if i % 2 else 0.85
        obs = _blend(obs, np.asarray(badge), colour, opacity)
        ink = (255, 255, 255) if sum(colour) < 400 else (0, 0, 0)
        obs = _blend(obs, np.asarray(glyph), ink, opacity)
        cover = np.asarray(badge)
        boxes = [(cx - r, cy - r, cx + r + 1, cy + r + 1)]
        pair.notes = f"{font_name} {colour_name} badge, opacity {opacity}"
    else:  # watermark, tiled
        text = MARKS[int(rng.integers(0, len(MARKS)))]
        opacity = float(rng.uniform(0.3, 0.6))
        if kind == "watermark":
            f = _fit_font(font_name, (text,), int(w * 0.7), int(h * 0.18), 0)
            bw, bh = _measure((text,), f, 0)
            xy = (
                int(rng.integers(2, max(3, w - bw - 2))),
                int(rng.integers(2, max(3, h - bh - 2))),
            )
            layer, boxes = _text_layer((w, h), (text,), f, xy, 0)
            cov = np.asarray(layer)
        else:
            f = _font(font_name, max(12, int(min(h, w) * 0.07)))
            bw, bh = _measure((text,), f, 0)
            big = Image.new("L", (2 * w, 2 * h), 0)
            d = ImageDraw.Draw(big)
            step_x, step_y = bw + int(w * 0.1), bh * 3
            for yy in range(0, 2 * h, step_y):
                for xx in range((yy // step_y % 2) * step_x // 2, 2 * w, step_x):
                    d.text((xx, yy), text, fill=255, font=f)
            angle = float(rng.uniform(-35, 35))
            big = big.rotate(angle, resample=Image.Resampling.BILINEAR)
            cov = np.ascontiguousarray(np.asarray(big)[h // 2 : h // 2 + h, w // 2 : w // 2 + w])
            ys, _ = np.nonzero(cov)
            boxes = [(0, 0, w, h)] if ys.size else []
        obs = _blend(obs, cov, colour, opacity)
        cover = cov
        pair.notes = f"{font_name} {colour_name} opacity {opacity:.2f}"
    pair.observed = obs
    pair.overlay = np.any(obs != pair.clean, axis=2) | (cover > 0)
    pair.boxes = [_clip(b, w, h) for b in boxes]
    # the photo's own text the overlay covers cannot be kept: only the boxes it leaves alone
    grown = cv2.dilate(pair.overlay.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    pair.own = [
        c
        for c in (_clip(b, w, h) for b in own if _overlap(b, x, y, w, h))
        if not grown[c[1] : c[3], c[0] : c[2]].any()
    ]
    return pair


def _hits(a: Box, b: Box, margin: int = 4) -> bool:
    return not (
        a[2] + margin <= b[0]
        or b[2] + margin <= a[0]
        or a[3] + margin <= b[1]
        or b[3] + margin <= a[1]
    )


def _overlap(b: Box, x: int, y: int, w: int, h: int) -> bool:
    return b[2] > 0 and b[3] > 0 and b[0] < w and b[1] < h


def _clip(b: Box, w: int, h: int) -> Box:
    return (max(0, b[0]), max(0, b[1]), min(w, b[2]), min(h, b[3]))


def pairs(root: Path = CORPUS_DIR, only: str | None = None) -> Iterator[Pair]:
    """Every pair, source by source (``only``: ``tune`` or ``report``)."""
    for source, photo in sources(root).items():
        if only is not None and split_of(source) != only:
            continue
        own = own_text_boxes(photo) if source in OWN_TEXT else []
        for i in range(len(KINDS)):
            yield make_pair(source, photo, i, own)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="fetch the scene-text photos")
    f.add_argument("--mirror", type=Path, help="a local git mirror of opencv_contrib")
    f.add_argument("--dest", type=Path, default=CORPUS_DIR)
    s = sub.add_parser("list", help="list the sources and their halves")
    s.add_argument("--dest", type=Path, default=CORPUS_DIR)
    args = ap.parse_args()
    if args.cmd == "fetch":
        print(fetch(args.dest, args.mirror))
    else:
        for source in sources(args.dest):
            print(f"{split_of(source):6s} {source}")


if __name__ == "__main__":
    main()
