"""Ad layouts: a background for the style, the product cut-out with a soft shadow, and the
copy (headline, tagline, call to action, price) set in real type, each block fitted to its
box and checked for WCAG contrast against the pixels actually behind it.

Three arrangements cover the eight platforms: *square* (product above, copy below, centred),
*tall* (headline above, product, tagline and button below, inside the safe zone of story
formats) and *wide* (copy in a left column, product on the right). Five styles paint the
background and pick faces and colours: ``minimal``, ``bold``, ``elegant``, ``vibrant``,
``dark``. A text colour is kept only when its worst contrast with every pixel behind the
text is at least 4.5:1; otherwise the other of near-black/white is tried, and then a panel
(a scrim, then a solid panel) is laid behind the text until it passes.
"""

from __future__ import annotations

import colorsys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import cv2
import numpy as np
import numpy.typing as npt
from PIL import Image, ImageDraw

from pixelmill.engines.ads.platforms import Platform
from pixelmill.engines.ads.typography import FittedText, fit_text, text_width, worst_contrast
from pixelmill.engines.base import EngineError, ImageArray
from pixelmill.engines.runtime.shadows import under_shadow

RGB = tuple[int, int, int]
Box = tuple[int, int, int, int]
"""``(x0, y0, x1, y1)``, exclusive ends."""
Float3 = npt.NDArray[np.float32]

MIN_CONTRAST = 4.5
INK_DARK: RGB = (17, 20, 24)
INK_LIGHT: RGB = (255, 255, 255)

StyleName = Literal["minimal", "bold", "elegant", "vibrant", "dark"]
STYLE_NAMES: tuple[str, ...] = ("minimal", "bold", "elegant", "vibrant", "dark")


@dataclass(frozen=True)
class AdCopy:
    """The words of an ad; empty strings are left out."""

    headline: str = ""
    tagline: str = ""
    cta: str = ""
    price: str = ""


@dataclass(frozen=True)
class TextBlock:
    """A block of text as drawn: ``box`` is its ink box on the canvas."""

    role: str
    lines: tuple[str, ...]
    box: Box
    size: int
    face: str
    color: RGB
    contrast: float
    backing: str = "none"
    truncated: bool = False

    def as_dict(self) -> dict[str, object]:
        return {
            "role": self.role,
            "text": "\n".join(self.lines),
            "box": list(self.box),
            "font_size": self.size,
            "face": self.face,
            "color": "#{:02x}{:02x}{:02x}".format(*self.color),
            "contrast": round(self.contrast, 2),
            "backing": self.backing,
            "truncated": self.truncated,
        }


@dataclass(frozen=True)
class AdRender:
    """The finished ad (``pixels``), the same canvas without the glyphs (``backing``: what is
    behind the text, panels and buttons included) and the text blocks."""

    pixels: ImageArray
    backing: ImageArray
    blocks: list[TextBlock]
    arrangement: str
    accent: RGB


@dataclass(frozen=True)
class Palette:
    accent: RGB
    accent_hsv: tuple[float, float, float]
    colourful: bool


@dataclass(frozen=True)
class Style:
    name: str
    headline_face: str
    tagline_face: str
    cta_face: str
    ink: Callable[[Palette], RGB]
    sub_ink: Callable[[Palette], RGB]
    background: Callable[[int, int, Palette, Box], Float3]
    cta: Literal["pill", "underline"]
    cta_fill: Callable[[Palette], RGB]
    uppercase: bool = False
    headline_tracking: float = 0.0
    shadow: float = 0.28
    rules: bool = False
    tint_disc: float = 0.0
    halo: float = 0.0
    """A soft light rim around the product (a dark product on a dark background)."""


# ---- colour --------------------------------------------------------------------------------


def _hsv_rgb(h: float, s: float, v: float) -> RGB:
    r, g, b = colorsys.hsv_to_rgb(h % 1.0, min(max(s, 0.0), 1.0), min(max(v, 0.0), 1.0))
    return round(r * 255), round(g * 255), round(b * 255)


def product_palette(cutout: ImageArray) -> Palette:
    """The product's accent colour: the most frequent saturated hue of its opaque pixels
    (a deep blue when the product is mostly grey, white or black)."""
    opaque = cutout[cutout[..., 3] > 200][:, :3]
    if opaque.shape[0] > 40000:
        opaque = opaque[:: opaque.shape[0] // 40000]
    if opaque.size == 0:
        return Palette((38, 70, 160), (0.62, 0.76, 0.63), False)
    hsv = cv2.cvtColor(opaque.reshape(-1, 1, 3), cv2.COLOR_RGB2HSV_FULL).reshape(-1, 3)
    sat = hsv[:, 1].astype(np.float32) / 255.0
    val = hsv[:, 2].astype(np.float32) / 255.0
    vivid = (sat > 0.28) & (val > 0.18)
    if np.count_nonzero(vivid) < 0.08 * len(hsv):
        return Palette((38, 70, 160), (0.62, 0.76, 0.63), False)
    hues = hsv[vivid, 0].astype(np.float32) / 256.0
    hist, edges = np.histogram(hues, bins=24, range=(0.0, 1.0), weights=sat[vivid])
    k = int(np.argmax(hist))
    in_bin = (hues >= edges[k]) & (hues < edges[k + 1])
    h = float(np.median(hues[in_bin])) if np.any(in_bin) else float(edges[k])
    s = float(np.median(sat[vivid][in_bin])) if np.any(in_bin) else 0.7
    v = float(np.median(val[vivid][in_bin])) if np.any(in_bin) else 0.6
    return Palette(_hsv_rgb(h, s, v), (h, s, v), True)


def _deep(p: Palette) -> RGB:
    h, s, _ = p.accent_hsv
    return _hsv_rgb(h, max(0.55, min(s, 0.85)), 0.42)


def _vivid(p: Palette) -> RGB:
    h, s, _ = p.accent_hsv
    return _hsv_rgb(h, max(0.6, min(s, 0.9)), 0.86)


# ---- backgrounds (float RGB 0..1) ----------------------------------------------------------


def _flat(h: int, w: int, color: RGB) -> Float3:
    return np.broadcast_to(np.array(color, np.float32) / 255.0, (h, w, 3)).copy()


def _radial(h: int, w: int, center: tuple[float, float], radius: float) -> npt.NDArray[np.float32]:
    """0 at ``center`` rising to 1 at ``radius`` pixels and beyond."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    d = np.sqrt((xx - center[0]) ** 2 + (yy - center[1]) ** 2) / max(radius, 1.0)
    return np.asarray(np.clip(d, 0.0, 1.0), dtype=np.float32)


def _mix(a: RGB, b: RGB, t: npt.NDArray[np.float32]) -> Float3:
    ca = np.array(a, np.float32) / 255.0
    cb = np.array(b, np.float32) / 255.0
    return (ca + (cb - ca) * t[..., None]).astype(np.float32)


def _center(box: Box) -> tuple[float, float]:
    return (box[0] + box[2]) / 2.0, (box[1] + box[3]) / 2.0


def bg_minimal(h: int, w: int, p: Palette, product: Box) -> Float3:
    t = _radial(h, w, _center(product), 0.9 * max(h, w))
    return _mix((250, 249, 247), (236, 234, 230), t**1.5)


def bg_bold(h: int, w: int, p: Palette, product: Box) -> Float3:
    deep = _deep(p)
    lighter = _hsv_rgb(p.accent_hsv[0], 0.5, 0.55)
    t = _radial(h, w, _center(product), 0.75 * max(h, w))
    return _mix(lighter, deep, t)


def bg_elegant(h: int, w: int, p: Palette, product: Box) -> Float3:
    t = np.broadcast_to(np.linspace(0.0, 1.0, h, dtype=np.float32)[:, None], (h, w))
    return _mix((246, 241, 232), (233, 225, 211), np.ascontiguousarray(t))


def bg_vibrant(h: int, w: int, p: Palette, product: Box) -> Float3:
    hue = p.accent_hsv[0]
    a = _hsv_rgb(hue, 0.72, 0.8)
    b = _hsv_rgb(hue + 0.11, 0.78, 0.66)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    t = np.clip((xx / max(w, 1) + yy / max(h, 1)) / 2.0, 0.0, 1.0)
    return _mix(a, b, t)


def bg_dark(h: int, w: int, p: Palette, product: Box) -> Float3:
    t = _radial(h, w, _center(product), 0.7 * max(h, w))
    glow = _hsv_rgb(p.accent_hsv[0], 0.25 if p.colourful else 0.05, 0.3)
    return _mix(glow, (12, 13, 16), t**0.8)


STYLES: dict[str, Style] = {
    s.name: s
    for s in (
        Style(
            "minimal",
            "sans-bold",
            "sans",
            "sans-bold",
            ink=lambda p: (28, 30, 34),
            sub_ink=lambda p: (88, 90, 96),
            background=bg_minimal,
            cta="pill",
            cta_fill=lambda p: (28, 30, 34),
            shadow=0.22,
        ),
        Style(
            "bold",
            "condensed-bold",
            "condensed",
            "condensed-bold",
            ink=lambda p: INK_LIGHT,
            sub_ink=lambda p: (238, 238, 238),
            background=bg_bold,
            cta="pill",
            cta_fill=lambda p: (255, 214, 10),
            uppercase=True,
            headline_tracking=0.01,
            shadow=0.38,
            tint_disc=0.12,
        ),
        Style(
            "elegant",
            "serif",
            "serif-italic",
            "sans",
            ink=lambda p: (43, 36, 28),
            sub_ink=lambda p: (96, 82, 66),
            background=bg_elegant,
            cta="underline",
            cta_fill=lambda p: (43, 36, 28),
            shadow=0.2,
            rules=True,
        ),
        Style(
            "vibrant",
            "sans-bold",
            "sans",
            "sans-bold",
            ink=lambda p: INK_LIGHT,
            sub_ink=lambda p: INK_LIGHT,
            background=bg_vibrant,
            cta="pill",
            cta_fill=lambda p: INK_LIGHT,
            shadow=0.3,
            tint_disc=0.2,
        ),
        Style(
            "dark",
            "sans-bold",
            "sans",
            "sans-bold",
            ink=lambda p: (245, 245, 245),
            sub_ink=lambda p: (200, 202, 208),
            background=bg_dark,
            cta="pill",
            cta_fill=_vivid,
            shadow=0.5,
            halo=0.3,
        ),
    )
}


# ---- arrangement ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Arrangement:
    name: str
    product: Box
    regions: list[tuple[Box, tuple[str, ...], str]] = field(default_factory=list)
    """(box, roles set in it, vertical anchor top|middle|bottom)"""
    align: Literal["center", "left"] = "center"


def arrange(platform: Platform, copy: AdCopy) -> Arrangement:
    w, h = platform.width, platform.height
    m = round(0.065 * min(w, h))
    has_text = bool(copy.headline or copy.tagline or copy.cta)
    if platform.aspect > 1.3:
        split = round(0.5 * w) if has_text else m
        return Arrangement(
            "wide",
            (split, m, w - m, h - m),
            [((m, m, split - round(0.4 * m), h - m), ("headline", "tagline", "cta"), "middle")],
            "left",
        )
    if platform.aspect < 0.8:
        top = max(m, round(platform.safe_top * h))
        bottom = h - max(m, round(platform.safe_bottom * h))
        usable = bottom - top
        head_end = top + round(0.22 * usable)
        prod_end = top + round(0.74 * usable)
        return Arrangement(
            "tall",
            (m, head_end + round(0.03 * usable), w - m, prod_end),
            [
                ((m, top, w - m, head_end), ("headline",), "bottom"),
                ((m, prod_end + round(0.02 * usable), w - m, bottom), ("tagline", "cta"), "middle"),
            ],
        )
    text_top = round(0.62 * h) if has_text else h - m
    return Arrangement(
        "square",
        (m, m, w - m, text_top - round(0.02 * h)),
        [((m, text_top, w - m, h - m), ("headline", "tagline", "cta"), "middle")],
    )


# ---- product -------------------------------------------------------------------------------


def _crop(rgba: ImageArray) -> ImageArray:
    a = rgba[..., 3] > 8
    rows = np.flatnonzero(a.any(axis=1))
    cols = np.flatnonzero(a.any(axis=0))
    if rows.size == 0:
        raise EngineError("the product cut-out is empty")
    return rgba[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]


def place_product(canvas: Float3, cutout: ImageArray, box: Box, style: Style) -> Box:
    """Scale the cut-out into ``box`` (at most 88 % of it), centre it, draw a soft shadow under
    it and composite it; returns where it landed."""
    sub = _crop(cutout)
    bw, bh = box[2] - box[0], box[3] - box[1]
    k = min(0.88 * bw / sub.shape[1], 0.88 * bh / sub.shape[0])
    pw, ph = max(1, round(sub.shape[1] * k)), max(1, round(sub.shape[0] * k))
    a = sub[..., 3].astype(np.float32) / 255.0
    premult = np.dstack([sub[..., :3].astype(np.float32) / 255.0 * a[..., None], a])
    interp = cv2.INTER_AREA if k < 1 else cv2.INTER_CUBIC
    scaled = np.asarray(cv2.resize(premult, (pw, ph), interpolation=interp), np.float32)
    alpha = np.clip(scaled[..., 3], 0.0, 1.0)
    colour = np.clip(scaled[..., :3], 0.0, alpha[..., None])
    x = box[0] + (bw - pw) // 2
    y = box[1] + (bh - ph) // 2
    H, W = canvas.shape[:2]
    if style.shadow > 0:
        under_shadow(canvas, alpha, x, y, style.shadow)
    if style.halo > 0:
        sigma = max(2.0, 0.03 * max(pw, ph))
        pad = int(3 * sigma)
        glow = np.zeros((ph + 2 * pad, pw + 2 * pad), np.float32)
        glow[pad : pad + ph, pad : pad + pw] = alpha
        glow = cv2.GaussianBlur(glow, (0, 0), sigma) * style.halo
        gx0, gy0 = max(0, x - pad), max(0, y - pad)
        gx1, gy1 = min(W, x + pw + pad), min(H, y + ph + pad)
        g = glow[gy0 - (y - pad) : gy1 - (y - pad), gx0 - (x - pad) : gx1 - (x - pad), None]
        canvas[gy0:gy1, gx0:gx1] += (1.0 - canvas[gy0:gy1, gx0:gx1]) * g
    x0, y0 = max(0, x), max(0, y)
    x1, y1 = min(W, x + pw), min(H, y + ph)
    region = canvas[y0:y1, x0:x1]
    a = alpha[y0 - y : y1 - y, x0 - x : x1 - x, None]
    region[:] = colour[y0 - y : y1 - y, x0 - x : x1 - x] + region * (1.0 - a)
    return x, y, x + pw, y + ph


def _disc(canvas: Float3, center: tuple[float, float], radius: float, strength: float) -> None:
    """A soft light disc behind the product (bold, vibrant)."""
    h, w = canvas.shape[:2]
    t = 1.0 - _radial(h, w, center, radius)
    t = np.clip(t * 6.0, 0.0, 1.0) * strength
    canvas += (1.0 - canvas) * t[..., None]


# ---- text ----------------------------------------------------------------------------------


@dataclass
class Sheet:
    """The canvas with glyphs (``image``) and without (``backing``)."""

    image: Image.Image
    backing: Image.Image

    def rect(self, box: Box, color: RGB, alpha: float, radius: int) -> None:
        for img in (self.image, self.backing):
            if alpha >= 1.0:
                ImageDraw.Draw(img).rounded_rectangle(
                    (box[0], box[1], box[2] - 1, box[3] - 1), radius=radius, fill=color
                )
                continue
            over = Image.new("RGBA", img.size, (0, 0, 0, 0))
            ImageDraw.Draw(over).rounded_rectangle(
                (box[0], box[1], box[2] - 1, box[3] - 1),
                radius=radius,
                fill=(*color, round(255 * alpha)),
            )
            img.paste(Image.alpha_composite(img.convert("RGBA"), over).convert("RGB"))

    def pixels(self, box: Box) -> npt.NDArray[np.uint8]:
        w, h = self.backing.size
        x0, y0, x1, y1 = max(0, box[0]), max(0, box[1]), min(w, box[2]), min(h, box[3])
        return np.asarray(self.backing.crop((x0, y0, x1, y1)))


def _line_x(region: Box, width: float, align: str) -> float:
    if align == "left":
        return float(region[0])
    return region[0] + (region[2] - region[0] - width) / 2.0


def _glyph_layout(
    fitted: FittedText, region: Box, top: int, align: str
) -> tuple[list[tuple[float, int, str]], Box]:
    """Where each line goes and the block's ink box."""
    fnt = fitted.font
    placed: list[tuple[float, int, str]] = []
    x0 = y0 = 10**9
    x1 = y1 = -(10**9)
    for i, line in enumerate(fitted.lines):
        lw = text_width(fnt, line, fitted.tracking)
        lx = _line_x(region, lw, align)
        ly = top + i * fitted.line_height
        placed.append((lx, ly, line))
        bx0, by0, bx1, by1 = fnt.getbbox(line, anchor="la")
        x0, y0 = min(x0, int(np.floor(lx + bx0))), min(y0, int(ly + by0))
        x1 = max(x1, int(np.ceil(lx + max(bx1, lw))))
        y1 = max(y1, int(np.ceil(ly + by1)))
    return placed, (x0, y0, x1, y1)


def _draw_glyphs(
    img: Image.Image, fitted: FittedText, placed: list[tuple[float, int, str]], color: RGB
) -> None:
    draw = ImageDraw.Draw(img)
    fnt = fitted.font
    for lx, ly, line in placed:
        if not fitted.tracking:
            draw.text((lx, ly), line, font=fnt, fill=color, anchor="la")
            continue
        x = lx
        for ch in line:
            draw.text((x, ly), ch, font=fnt, fill=color, anchor="la")
            x += float(fnt.getlength(ch)) + fitted.tracking * fnt.size


def _pad(box: Box, pad: int, limit: tuple[int, int]) -> Box:
    return (
        max(0, box[0] - pad),
        max(0, box[1] - pad),
        min(limit[0], box[2] + pad),
        min(limit[1], box[3] + pad),
    )


def set_text(
    sheet: Sheet,
    role: str,
    fitted: FittedText,
    region: Box,
    top: int,
    align: str,
    preferred: RGB,
) -> TextBlock:
    """Draw ``fitted`` with the first colour that reaches 4.5:1 against every pixel behind
    it; failing that, behind a scrim or a solid panel that makes it pass."""
    placed, ink_box = _glyph_layout(fitted, region, top, align)
    size = sheet.image.size
    measure = _pad(ink_box, max(2, round(0.08 * fitted.size)), size)
    behind = sheet.pixels(measure)
    chosen: tuple[RGB, float] | None = None
    for colour in (preferred, INK_DARK, INK_LIGHT):
        c = worst_contrast(colour, behind)
        if c >= MIN_CONTRAST:
            chosen = (colour, c)
            break
    backing = "none"
    if chosen is None:
        light_ink = sum(preferred) / 3 > 128
        ink = INK_LIGHT if light_ink else INK_DARK
        panel_colour: RGB = (14, 16, 20) if light_ink else (255, 255, 255)
        pad = max(6, round(0.38 * fitted.size))
        panel = _pad(ink_box, pad, size)
        for alpha in (0.55, 0.7, 0.85, 1.0):
            trial = Sheet(sheet.image.copy(), sheet.backing.copy())
            trial.rect(panel, panel_colour, alpha, radius=round(0.3 * pad))
            c = worst_contrast(ink, trial.pixels(measure))
            if c >= MIN_CONTRAST or alpha >= 1.0:
                sheet.image, sheet.backing = trial.image, trial.backing
                chosen = (ink, c)
                backing = "scrim" if alpha < 1.0 else "panel"
                break
    assert chosen is not None
    _draw_glyphs(sheet.image, fitted, placed, chosen[0])
    return TextBlock(
        role,
        fitted.lines,
        ink_box,
        fitted.size,
        fitted.face,
        chosen[0],
        chosen[1],
        backing,
        fitted.truncated,
    )


def _best_on(fill: RGB) -> RGB:
    """Near-black or white, whichever contrasts more with ``fill`` (one of them always
    reaches 4.58:1)."""
    dark = worst_contrast(INK_DARK, np.array([fill], np.uint8))
    light = worst_contrast(INK_LIGHT, np.array([fill], np.uint8))
    return INK_DARK if dark >= light else INK_LIGHT


@dataclass
class _Item:
    role: str
    fitted: FittedText
    height: int
    gap_before: int = 0
    pill: tuple[int, int] | None = None  # (width, height) of a button


def _plan_region(
    region: Box, roles: tuple[str, ...], copy: AdCopy, style: Style, canvas: tuple[int, int]
) -> list[_Item]:
    rw, rh = region[2] - region[0], region[3] - region[1]
    unit = min(canvas)
    present = [r for r in roles if getattr(copy, r)]
    if not present:
        return []
    shares = {"headline": 0.58, "tagline": 0.26, "cta": 0.16}
    total = sum(shares[r] for r in present) or 1.0
    items: list[_Item] = []
    tall = canvas[1] > 1.3 * canvas[0]
    head_size = round((0.13 if tall else 0.11) * unit)
    for role in present:
        share = shares[role] / total
        box_h = max(12, round(rh * share * 0.86))
        if role == "headline":
            text = copy.headline.upper() if style.uppercase else copy.headline
            fitted = fit_text(
                text,
                style.headline_face,
                rw,
                box_h,
                max_size=min(head_size, box_h),
                min_size=round(0.03 * unit),
                max_lines=4 if tall else 3,
                tracking=style.headline_tracking,
            )
            head_size = fitted.size
            items.append(_Item(role, fitted, fitted.height))
        elif role == "tagline":
            alone = "headline" not in present
            cap = round(0.062 * unit) if alone else round(min(0.55 * head_size, 0.052 * unit))
            fitted = fit_text(
                copy.tagline,
                style.tagline_face,
                rw,
                box_h,
                max_size=max(12, min(cap, box_h)),
                min_size=round(0.022 * unit),
                max_lines=3,
            )
            gap = round(0.45 * fitted.size) if items else 0
            items.append(_Item(role, fitted, fitted.height, gap))
        else:
            cap = (
                round(min(0.04 * unit, 0.45 * head_size)) if copy.headline else round(0.045 * unit)
            )
            pad_x = round(1.3 * cap)
            fitted = fit_text(
                copy.cta.upper(),
                style.cta_face,
                max(10, rw - 2 * pad_x),
                max(10, round(box_h * 0.62)),
                max_size=max(12, cap),
                min_size=round(0.02 * unit),
                max_lines=1,
                tracking=0.08,
                balance=False,
            )
            pill_h = round(fitted.height + 1.1 * fitted.size)
            pill_w = min(rw, fitted.width + 2 * pad_x)
            gap = round(0.9 * fitted.size) if items else 0
            items.append(_Item(role, fitted, pill_h, gap, (pill_w, pill_h)))
    return items


def _set_region(
    sheet: Sheet,
    region: Box,
    items: list[_Item],
    anchor: str,
    align: str,
    style: Style,
    palette: Palette,
) -> list[TextBlock]:
    total = sum(i.height + i.gap_before for i in items)
    rh = region[3] - region[1]
    if anchor == "top":
        y = region[1]
    elif anchor == "bottom":
        y = region[3] - total
    else:
        y = region[1] + (rh - total) // 2
    blocks: list[TextBlock] = []
    for item in items:
        if not item.fitted.lines:
            continue
        y += item.gap_before
        if item.role == "cta" and item.pill is not None:
            pw, ph = item.pill
            px = round(_line_x(region, pw, align))
            pill = (px, y, px + pw, y + ph)
            text_top = y + (ph - item.fitted.height) // 2
            inner = (pill[0], text_top, pill[2], text_top + item.fitted.height)
            if style.cta == "pill":
                fill = style.cta_fill(palette)
                sheet.rect(pill, fill, 1.0, radius=ph // 2)
                blocks.append(
                    set_text(sheet, "cta", item.fitted, inner, text_top, "center", _best_on(fill))
                )
            else:
                left = inner if align == "center" else (px, text_top, px + pw, inner[3])
                block = set_text(
                    sheet, "cta", item.fitted, left, text_top, align, style.cta_fill(palette)
                )
                ImageDraw.Draw(sheet.image).line(
                    (
                        block.box[0],
                        block.box[3] + round(0.35 * item.fitted.size),
                        block.box[2],
                        block.box[3] + round(0.35 * item.fitted.size),
                    ),
                    fill=block.color,
                    width=max(1, round(item.fitted.size / 14)),
                )
                blocks.append(block)
        else:
            ink = style.ink(palette) if item.role == "headline" else style.sub_ink(palette)
            blocks.append(set_text(sheet, item.role, item.fitted, region, y, align, ink))
        y += item.height
    return blocks


def _price_badge(
    sheet: Sheet, price: str, product: Box, area: Box, palette: Palette, unit: int
) -> TextBlock:
    fill = _vivid(palette) if palette.colourful else (214, 40, 57)
    fitted = fit_text(
        price,
        "sans-bold",
        round(0.16 * unit),
        round(0.07 * unit),
        max_size=round(0.05 * unit),
        min_size=round(0.02 * unit),
        max_lines=1,
        balance=False,
    )
    r = round(max(fitted.width * 0.62 + 0.03 * unit, 0.075 * unit))
    # At the product's top right corner, kept inside the product's region so it never
    # covers text (whose contrast was measured before the badge was drawn).
    # Beside a narrow product, on the corner of a wide one.
    cx = min(area[2] - r, product[2] + round(0.5 * r))
    cy = max(area[1] + r, product[1] + round(0.45 * r))
    for img in (sheet.image, sheet.backing):
        ImageDraw.Draw(img).ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill)
    top = cy - fitted.height // 2
    region = (cx - r, top, cx + r, top + fitted.height)
    return set_text(sheet, "price", fitted, region, top, "center", _best_on(fill))


def _rule_above(sheet: Sheet, blocks: list[TextBlock], align: str, unit: int) -> None:
    """A short gold rule above the headline (elegant)."""
    head = next((b for b in blocks if b.role == "headline"), None)
    if head is None:
        return
    y = head.box[1] - round(0.035 * unit)
    if y < 2:
        return
    half = round(0.05 * unit)
    x0 = (head.box[0] + head.box[2]) // 2 - half if align == "center" else head.box[0]
    for img in (sheet.image, sheet.backing):
        ImageDraw.Draw(img).line(
            (x0, y, x0 + 2 * half, y), fill=(176, 150, 104), width=max(2, unit // 360)
        )


def render_ad(cutout: ImageArray, platform: Platform, style_name: str, copy: AdCopy) -> AdRender:
    """One ad: ``cutout`` (RGBA) on ``platform``'s canvas in ``style_name``."""
    style = STYLES[style_name]
    w, h = platform.width, platform.height
    unit = min(w, h)
    palette = product_palette(cutout)
    arrangement = arrange(platform, copy)
    canvas = style.background(h, w, palette, arrangement.product)
    if style.tint_disc:
        pb = arrangement.product
        r = 0.5 * min(pb[2] - pb[0], pb[3] - pb[1])
        _disc(canvas, _center(pb), r, style.tint_disc)
    landed = place_product(canvas, cutout, arrangement.product, style)
    rgb = np.asarray(np.clip(canvas * 255.0 + 0.5, 0, 255), np.uint8)
    sheet = Sheet(Image.fromarray(rgb), Image.fromarray(rgb.copy()))
    blocks: list[TextBlock] = []
    for region, roles, anchor in arrangement.regions:
        items = _plan_region(region, roles, copy, style, (w, h))
        blocks += _set_region(sheet, region, items, anchor, arrangement.align, style, palette)
    if style.rules:
        _rule_above(sheet, blocks, arrangement.align, unit)
    if copy.price:
        blocks.append(_price_badge(sheet, copy.price, landed, arrangement.product, palette, unit))
    return AdRender(
        np.asarray(sheet.image),
        np.asarray(sheet.backing),
        blocks,
        arrangement.name,
        palette.accent,
    )
