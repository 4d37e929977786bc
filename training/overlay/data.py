"""Synthetic overlay data for pixelmill-overlay: clean photos with captions, tiled watermarks and
corner logos composited on top, with the exact per-pixel overlay alpha and colour recorded.

Every overlay is built from layers, each a coverage mask (PIL-rendered, anti-aliased) times an
opacity, in one flat colour. Layers are combined with the Porter-Duff *over* operator into one
effective alpha ``a`` and colour ``c`` per pixel, so the observed image is exactly
``observed = (1 - a) * clean + a * c`` (then rounded to uint8, as a user's upload would be).

Kinds (``KINDS``):
- ``caption``: one to three lines of opaque text, optionally with an outline and/or a soft
  drop shadow (30-75 % opacity, blurred);
- ``watermark``: text (sometimes with a ©) tiled on a rotated grid, or one large rotated line,
  at 20-60 % opacity;
- ``logo``: a corner mark: ©/®/™ symbols, a short brand name, sometimes inside a ring or a
  rounded box, at 45-100 % opacity;
- ``clean``: nothing (the network must learn to leave photos alone).

Photos come from ``/work/shared/data/sr-train`` with a seeded hold-out split (``split``).
Fonts (``fonts()``, pool chosen with ``use_fonts``): every DejaVu / Liberation TTF under
/usr/share/fonts by default; ``wide`` adds Pillow's default font and six families from PyPI font
wheels; ``held-out`` is five other families for evaluation only.
"""

from __future__ import annotations

import importlib.resources
import random
import string
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

FOLDERS = ("CBSD68", "CSun_Hays80", "CUrban100")
VAL_PER_FOLDER = {"CBSD68": 4, "CSun_Hays80": 4, "CUrban100": 4}
KINDS = ("caption", "watermark", "logo", "clean")
FONT_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/truetype/liberation"))

WORDS = [
    "sample",
    "preview",
    "copyright",
    "stock",
    "photo",
    "proof",
    "draft",
    "summer",
    "holiday",
    "travel",
    "studio",
    "pixelmill",
    "demo",
    "confidential",
    "property",
    "shot",
    "by",
    "photography",
    "images",
    "agency",
    "news",
    "live",
    "breaking",
    "sale",
    "offer",
    "only",
    "today",
    "free",
    "www",
    "example",
    "com",
    "lorem",
    "ipsum",
    "dolor",
    "amet",
    "best",
    "wedding",
    "nature",
    "city",
    "night",
    "morning",
    "sunset",
    "forest",
    "mountain",
    "river",
    "beach",
]
BRANDS = ("PIXEL", "ACME", "Lumen", "NOVA", "orbit", "Foto", "ZEN", "Kappa", "studio9", "AXIS")
SYMBOLS = ("\u00a9", "\u00ae", "\u2122")


# Font families from PyPI wheels (training/sr/requirements.txt) by pool; each family gets
# FAMILY_ENTRIES entries (its faces cycled), so a one-face family is not drowned out by a
# twelve-face one. The "held-out" families never enter training: they show a font regression.
PILLOW_DEFAULT = "pillow:default"  # Aileron Regular, embedded in Pillow (ImageFont.load_default)
POOL_FAMILIES: dict[str, tuple[str, ...]] = {
    "base": (),
    "wide": (
        PILLOW_DEFAULT,
        "font_roboto",
        "font_lato",
        "font_source_sans_pro",
        "font_caladea",
        "font_fredoka_one",
        "font_amatic_sc",
    ),
    "held-out": (
        "font_manrope",
        "font_rhd",
        "font_source_serif_pro",
        "font_hanken_grotesk",
        "font_fjallaone",
    ),
}
FAMILY_ENTRIES = 6
FONT_POOLS = tuple(POOL_FAMILIES)
_pool = ["base"]


def use_fonts(pool: str) -> None:
    """Select the font pool the generator draws from: ``base`` (DejaVu / Liberation, the default
    and every figure before stage 6), ``wide`` (base plus Pillow's default font and six families
    from PyPI wheels) or ``held-out`` (five other families, for evaluation only)."""
    if pool not in POOL_FAMILIES:
        raise ValueError(f"font pool must be one of {FONT_POOLS}")
    _pool[0] = pool


def family_faces(module: str) -> list[str]:
    """The faces of a font wheel (``PILLOW_DEFAULT`` stands for itself)."""
    if module == PILLOW_DEFAULT:
        return [PILLOW_DEFAULT]
    folder = importlib.resources.files(module) / "files"
    names = sorted(f.name for f in folder.iterdir() if f.name.endswith((".ttf", ".otf")))
    ttf = {n[:-4] for n in names if n.endswith(".ttf")}
    # a face shipped as both .otf and .ttf counts once; variable fonts are left out
    keep = [n for n in names if "Variable" not in n and not (n.endswith(".otf") and n[:-4] in ttf)]
    return [str(folder / n) for n in keep]


@cache
def pool_fonts(pool: str) -> tuple[str, ...]:
    found: list[str] = []
    if pool != "held-out":
        for d in FONT_DIRS:
            if d.is_dir():
                found.extend(str(p) for p in sorted(d.glob("*.ttf")) if "Math" not in p.name)
        if not found:
            raise RuntimeError("no TTF fonts found under " + ", ".join(map(str, FONT_DIRS)))
    for module in POOL_FAMILIES[pool]:
        faces = family_faces(module)
        found.extend(faces[i % len(faces)] for i in range(FAMILY_ENTRIES))
    return tuple(found)


def fonts() -> tuple[str, ...]:
    return pool_fonts(_pool[0])


@cache
def font(path: str, size: int) -> ImageFont.FreeTypeFont:
    if path == PILLOW_DEFAULT:
        face = ImageFont.load_default(size)
        assert isinstance(face, ImageFont.FreeTypeFont)
        return face
    return ImageFont.truetype(path, size)


def folder_images(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in {".png", ".jpg", ".jpeg"})


def split(root: Path, seed: int = 0) -> tuple[list[Path], list[Path]]:
    """Seeded hold-out: ``VAL_PER_FOLDER`` images from each folder, the rest for training."""
    rng = random.Random(seed)
    train: list[Path] = []
    val: list[Path] = []
    for folder in FOLDERS:
        files = folder_images(root / folder)
        picked = set(rng.sample(range(len(files)), VAL_PER_FOLDER[folder]))
        for i, f in enumerate(files):
            (val if i in picked else train).append(f)
    return train, val


def load_rgb(path: Path, max_side: int = 0) -> np.ndarray:
    with Image.open(path) as im:
        im = im.convert("RGB")
        if max_side and max(im.size) > max_side:
            s = max_side / max(im.size)
            im = im.resize((round(im.width * s), round(im.height * s)), Image.Resampling.LANCZOS)
        return np.asarray(im)


# --- layers ---------------------------------------------------------------------------------


@dataclass
class Overlay:
    alpha: np.ndarray  # (H, W) float32 in [0, 1]
    colour: np.ndarray  # (H, W, 3) float32 in [0, 1] (meaningless where alpha == 0)
    cover: np.ndarray  # (H, W) float32: where the overlay is (glyph coverage), whatever its opacity

    @staticmethod
    def empty(h: int, w: int) -> Overlay:
        return Overlay(
            np.zeros((h, w), np.float32),
            np.zeros((h, w, 3), np.float32),
            np.zeros((h, w), np.float32),
        )

    def over(self, alpha: np.ndarray, colour: np.ndarray, cover: np.ndarray | None = None) -> None:
        """Composite a layer (effective opacity ``alpha`` = anti-aliased ``cover`` x the layer's
        opacity; ``cover`` defaults to ``alpha``, an opaque layer) in a flat or per-pixel
        ``colour`` on top."""
        a2 = alpha.astype(np.float32)
        k2 = a2 if cover is None else cover.astype(np.float32)
        self.cover = (k2 + self.cover * (1.0 - k2)).astype(np.float32)
        a1 = self.alpha
        out = a2 + a1 * (1.0 - a2)
        num = a2[..., None] * colour + (a1 * (1.0 - a2))[..., None] * self.colour
        safe = np.where(out > 1e-6, out, 1.0)[..., None]
        self.colour = np.where(out[..., None] > 1e-6, num / safe, 0.0).astype(np.float32)
        self.alpha = out.astype(np.float32)

    def apply(self, clean: np.ndarray) -> np.ndarray:
        """The observed uint8 image."""
        x = clean.astype(np.float32) / 255.0
        a = self.alpha[..., None]
        y = (1.0 - a) * x + a * self.colour
        return np.clip(np.round(y * 255.0), 0, 255).astype(np.uint8)


def random_text(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.55:
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 4))]
        t = " ".join(words)
        style = rng.random()
        return t.upper() if style < 0.35 else t.title() if style < 0.6 else t
    if r < 0.75:
        return f"{rng.choice(BRANDS)}.{rng.choice(['com', 'io', 'net', 'org'])}"
    if r < 0.9:
        return f"{rng.choice(SYMBOLS)} {rng.randint(1995, 2026)} {rng.choice(BRANDS)}"
    n = rng.randint(3, 12)
    return "".join(rng.choice(string.ascii_letters + string.digits + "  -:!") for _ in range(n))


def random_colour(rng: random.Random, light_dark_bias: float = 0.7) -> np.ndarray:
    r = rng.random()
    if r < light_dark_bias / 2:
        v = rng.uniform(0.85, 1.0)
        return np.array([v, v, v], np.float32)
    if r < light_dark_bias:
        v = rng.uniform(0.0, 0.15)
        return np.array([v, v, v], np.float32)
    return np.array([rng.random() for _ in range(3)], np.float32)


def text_mask(
    h: int,
    w: int,
    text: str,
    xy: tuple[float, float],
    face: ImageFont.FreeTypeFont,
    stroke: int = 0,
) -> np.ndarray:
    """Anti-aliased coverage (0..1) of ``text`` drawn at ``xy`` (its top-left), optionally grown
    by a ``stroke``-pixel outline."""
    im = Image.new("L", (w, h), 0)
    ImageDraw.Draw(im).text(xy, text, fill=255, font=face, stroke_width=stroke, stroke_fill=255)
    return np.asarray(im, np.float32) / 255.0


def caption(rng: random.Random, h: int, w: int) -> Overlay:
    ov = Overlay.empty(h, w)
    lines = rng.choice((1, 1, 2, 2, 3))
    face_path = rng.choice(fonts())
    size = rng.randint(12, 64)
    face = font(face_path, size)
    fill = random_colour(rng)
    outline = rng.random() < 0.4
    shadow = rng.random() < 0.35
    stroke = max(1, round(size * rng.uniform(0.05, 0.12))) if outline else 0
    # an outline contrasts with the fill
    o_col = (1.0 - fill) if rng.random() < 0.8 else random_colour(rng)
    y = rng.uniform(-0.1 * size, 0.85 * h)
    for _ in range(lines):
        text = random_text(rng)
        x = rng.uniform(-0.1 * w, 0.7 * w)
        fm = text_mask(h, w, text, (x, y), face)
        if shadow:
            dx, dy = rng.randint(1, max(2, size // 10)), rng.randint(1, max(2, size // 10))
            sm = text_mask(h, w, text, (x + dx, y + dy), face, stroke)
            sigma = rng.uniform(0.5, max(0.6, size / 12))
            sm = cv2.GaussianBlur(sm, (0, 0), sigma)
            ov.over(sm * rng.uniform(0.3, 0.75), np.array([0.0, 0.0, 0.0], np.float32), sm)
        if outline:
            om = text_mask(h, w, text, (x, y), face, stroke)
            ov.over(om, o_col)
        ov.over(fm, fill)
        y += size * rng.uniform(1.1, 1.6)
    return ov


def watermark(rng: random.Random, h: int, w: int) -> Overlay:
    ov = Overlay.empty(h, w)
    opacity = rng.uniform(0.2, 0.6)
    colour = random_colour(rng, 0.85)
    face = font(rng.choice(fonts()), rng.randint(14, 72))
    text = random_text(rng)
    angle = rng.uniform(-45, 45) if rng.random() < 0.8 else 0.0
    side = int(1.5 * max(h, w)) + 8
    im = Image.new("L", (side, side), 0)
    draw = ImageDraw.Draw(im)
    stroke = rng.choice((0, 0, 0, 1, 2))
    if rng.random() < 0.7:  # tiled grid
        x0, y0, x1, y1 = draw.textbbox((0, 0), text, font=face, stroke_width=stroke)
        tw, th = x1 - x0, y1 - y0
        gx = tw + rng.randint(10, max(11, tw))
        gy = th + rng.randint(th, max(th + 1, 4 * th))
        shift = rng.uniform(0, 0.5) * gx
        for row, yy in enumerate(range(-gy, side + gy, gy)):
            off = (row * shift) % gx
            for xx in range(-gx, side + gx, gx):
                draw.text((xx + off, yy), text, fill=255, font=face, stroke_width=stroke)
    else:  # one large line near the centre
        big = font(rng.choice(fonts()), rng.randint(max(24, h // 8), max(25, h // 3)))
        x0, y0, x1, y1 = draw.textbbox((0, 0), text, font=big)
        draw.text(
            (side / 2 - (x1 - x0) / 2 + rng.uniform(-0.2, 0.2) * w, side / 2 - (y1 - y0) / 2),
            text,
            fill=255,
            font=big,
        )
    im = im.rotate(angle, resample=Image.Resampling.BILINEAR)
    m = np.asarray(im, np.float32) / 255.0
    oy, ox = (side - h) // 2, (side - w) // 2
    m = m[oy : oy + h, ox : ox + w]
    ov.over(m * opacity, colour, m)
    return ov


def logo(rng: random.Random, h: int, w: int) -> Overlay:
    ov = Overlay.empty(h, w)
    opacity = rng.uniform(0.45, 1.0) if rng.random() < 0.6 else 1.0
    colour = random_colour(rng)
    size = rng.randint(14, 56)
    face = font(rng.choice(fonts()), size)
    sym = rng.choice(SYMBOLS)
    r = rng.random()
    text = (
        sym
        if r < 0.3
        else f"{sym} {rng.choice(BRANDS)}"
        if r < 0.7
        else f"{rng.choice(BRANDS)}{sym}"
    )
    im = Image.new("L", (w, h), 0)
    draw = ImageDraw.Draw(im)
    x0, y0, x1, y1 = draw.textbbox((0, 0), text, font=face)
    tw, th = x1 - x0, y1 - y0
    margin = rng.randint(4, max(5, min(h, w) // 10))
    corner = rng.randrange(4)
    x = margin if corner in (0, 2) else w - margin - tw
    y = margin if corner in (0, 1) else h - margin - th
    shape = rng.random()
    pad = max(3, size // 4)
    if shape < 0.2:  # ring around the mark
        cx, cy, rad = x + tw / 2, y + th / 2 + y0, max(tw, th) / 2 + pad
        draw.ellipse(
            (cx - rad, cy - rad, cx + rad, cy + rad), outline=255, width=max(1, size // 12)
        )
    elif shape < 0.35:  # filled rounded box behind, text knocked out in a second colour
        box = Image.new("L", (w, h), 0)
        ImageDraw.Draw(box).rounded_rectangle(
            (x - pad, y + y0 - pad, x + tw + pad, y + y1 + pad), radius=pad, fill=255
        )
        bm = np.asarray(box, np.float32) / 255.0
        ov.over(bm * opacity, random_colour(rng), bm)
    draw.text((x - x0, y - y0 + y0), text, fill=255, font=face)
    tm = np.asarray(im, np.float32) / 255.0
    ov.over(tm * opacity, colour, tm)
    return ov


GENERATORS = {"caption": caption, "watermark": watermark, "logo": logo}


def make_overlay(rng: random.Random, kind: str, h: int, w: int) -> Overlay:
    if kind == "clean":
        return Overlay.empty(h, w)
    return GENERATORS[kind](rng, h, w)


# --- training patches and validation pairs --------------------------------------------------


@dataclass(frozen=True)
class PhotoAug:
    """Probabilities of changing the clean photo patch before the overlay goes on, so the network
    also sees photo content the three training folders lack (all 0: the patches as they are).

    - ``dense``: the patch is a 1.5-3x larger crop shrunk to size (area filter): fine, dense
      texture (grass, gravel, foliage) full of bright thin structure;
    - ``grey``: the patch's luminance in all three channels (grey photos);
    - ``contrast``: a contrast stretch about the patch's mean (x1.2-1.8) and/or a brightening gamma
      (0.5-0.9), clipped: bright rims and blown highlights, what a pale overlay looks like."""

    dense: float = 0.0
    grey: float = 0.0
    contrast: float = 0.0


class PatchSampler:
    """Random crops of training photos with a random overlay kind rendered on each (a second
    overlay of another kind is added sometimes), plus flips and the ``PhotoAug`` changes."""

    def __init__(
        self,
        images: list[np.ndarray],
        patch: int,
        seed: int,
        kind_weights: tuple[float, ...] = (0.35, 0.3, 0.2, 0.15),
        aug: PhotoAug = PhotoAug(),
    ) -> None:
        self.images = images
        self.patch = patch
        self.rng = random.Random(seed)
        self.nprng = np.random.default_rng(seed)
        sizes = np.array([im.shape[0] * im.shape[1] for im in images], np.float64)
        self.prob = sizes / sizes.sum()
        self.kind_weights = kind_weights
        self.aug = aug

    def crop(self) -> np.ndarray:
        p = self.patch
        im = self.images[int(self.nprng.choice(len(self.images), p=self.prob))]
        h, w = im.shape[:2]
        side = p
        if self.aug.dense and self.rng.random() < self.aug.dense:
            side = min(h, w, round(p * self.rng.uniform(1.5, 3.0)))
        i = self.rng.randrange(0, h - side + 1)
        j = self.rng.randrange(0, w - side + 1)
        clean = im[i : i + side, j : j + side]
        if side != p:
            clean = cv2.resize(clean, (p, p), interpolation=cv2.INTER_AREA)
        if self.aug.grey and self.rng.random() < self.aug.grey:
            y = clean.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
            clean = np.repeat(np.clip(np.round(y), 0, 255).astype(np.uint8)[..., None], 3, 2)
        if self.aug.contrast and self.rng.random() < self.aug.contrast:
            x = clean.astype(np.float32) / 255.0
            if self.rng.random() < 0.6:
                x = x.mean() + (x - x.mean()) * self.rng.uniform(1.2, 1.8)
            if self.rng.random() < 0.6:
                x = np.clip(x, 0.0, 1.0) ** self.rng.uniform(0.5, 0.9)
            clean = np.clip(np.round(x * 255.0), 0, 255).astype(np.uint8)
        return clean

    def sample(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        p = self.patch
        clean = self.crop()
        if self.rng.random() < 0.5:
            clean = clean[:, ::-1]
        kind = self.rng.choices(KINDS, self.kind_weights)[0]
        ov = make_overlay(self.rng, kind, p, p)
        if kind != "clean" and self.rng.random() < 0.15:
            other = self.rng.choice([k for k in GENERATORS if k != kind])
            extra = make_overlay(self.rng, other, p, p)
            ov.over(extra.alpha, extra.colour, extra.cover)
        obs = ov.apply(clean)
        return obs, np.ascontiguousarray(clean), ov.alpha, ov.colour, ov.cover

    def batch(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(obs, clean, colour)`` as (n, 3, p, p) float32 in [0, 1], ``alpha`` and ``cover``
        (n, 1, p, p)."""
        obs, clean, alpha, colour, cover = zip(*(self.sample() for _ in range(n)), strict=True)

        def chw(xs: tuple[np.ndarray, ...], scale: float) -> np.ndarray:
            return np.stack(xs).astype(np.float32).transpose(0, 3, 1, 2) / scale

        return (
            chw(obs, 255.0),
            chw(clean, 255.0),
            np.stack(alpha)[:, None].astype(np.float32),
            chw(colour, 1.0),
            np.stack(cover)[:, None].astype(np.float32),
        )


@dataclass
class ValPair:
    name: str
    kind: str
    observed: np.ndarray  # uint8 (H, W, 3)
    clean: np.ndarray  # uint8
    alpha: np.ndarray  # float32 (H, W)
    colour: np.ndarray  # float32 (H, W, 3)
    cover: np.ndarray  # float32 (H, W): glyph coverage whatever the opacity


def validation_pairs(paths: list[Path], seed: int = 7, max_side: int = 512) -> list[ValPair]:
    """One pair per held-out photo and kind, fixed by ``seed`` (images capped at ``max_side``)."""
    out: list[ValPair] = []
    for n, path in enumerate(paths):
        clean = load_rgb(path, max_side)
        h, w = clean.shape[:2]
        for kind in KINDS:
            rng = random.Random(seed * 1000 + n * 10 + KINDS.index(kind))
            ov = make_overlay(rng, kind, h, w)
            out.append(
                ValPair(
                    f"{path.parent.name}/{path.name}",
                    kind,
                    ov.apply(clean),
                    clean,
                    ov.alpha,
                    ov.colour,
                    ov.cover,
                )
            )
    return out
