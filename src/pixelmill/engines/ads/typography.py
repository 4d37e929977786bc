"""Type for ads: the installed fonts, text fitted to a box (wrapped at word boundaries, the
largest size that fits, an ellipsis only when even the smallest size cannot hold it all) and
WCAG 2.x contrast measured on pixels.

The faces come from the runtime's font loader (:mod:`~pixelmill.engines.runtime.fonts`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from PIL import ImageFont

from pixelmill.engines.runtime.fonts import font

ELLIPSIS = "…"
LINE_SPACING = 1.12


@dataclass(frozen=True)
class FittedText:
    """Text set in one face at one size: its lines and the block's size in pixels."""

    face: str
    size: int
    lines: tuple[str, ...]
    line_height: int
    width: int
    height: int
    tracking: float = 0.0
    truncated: bool = False

    @property
    def font(self) -> ImageFont.FreeTypeFont:
        return font(self.face, self.size)


def text_width(fnt: ImageFont.FreeTypeFont, text: str, tracking: float = 0.0) -> float:
    """Advance width of ``text``, with ``tracking`` (a fraction of the size) between letters."""
    extra = tracking * fnt.size * max(0, len(text) - 1)
    return float(fnt.getlength(text)) + extra


def _break_word(fnt: ImageFont.FreeTypeFont, word: str, max_w: float, tracking: float) -> list[str]:
    """A word wider than the line, cut into hyphenated pieces that fit."""
    pieces: list[str] = []
    while text_width(fnt, word, tracking) > max_w and len(word) > 1:
        cut = len(word) - 1
        while cut > 1 and text_width(fnt, word[:cut] + "-", tracking) > max_w:
            cut -= 1
        pieces.append(word[:cut] + "-")
        word = word[cut:]
    pieces.append(word)
    return pieces


def wrap(fnt: ImageFont.FreeTypeFont, text: str, max_w: float, tracking: float = 0.0) -> list[str]:
    """Greedy word wrap at ``max_w`` pixels; words longer than a line are hyphenated."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        trial = f"{current} {word}" if current else word
        if text_width(fnt, trial, tracking) <= max_w:
            current = trial
            continue
        if current:
            lines.append(current)
        pieces = _break_word(fnt, word, max_w, tracking)
        lines.extend(pieces[:-1])
        current = pieces[-1]
    if current:
        lines.append(current)
    return lines


def _measure(face: str, size: int, lines: list[str], tracking: float) -> tuple[int, int, int]:
    fnt = font(face, size)
    ascent, descent = fnt.getmetrics()
    line_h = max(1, round(size * LINE_SPACING))
    width = max((text_width(fnt, ln, tracking) for ln in lines), default=0.0)
    height = (len(lines) - 1) * line_h + ascent + descent if lines else 0
    return line_h, int(np.ceil(width)), height


def _balance(
    fnt: ImageFont.FreeTypeFont, text: str, lines: list[str], tracking: float
) -> list[str]:
    """Re-wrap to the narrowest width that keeps the same number of lines, so a two-line
    headline does not end in a lone word."""
    if len(lines) < 2:
        return lines
    widest = max(text_width(fnt, ln, tracking) for ln in lines)
    lo, hi = widest / len(lines), widest
    best = lines
    for _ in range(12):
        mid = (lo + hi) / 2
        trial = wrap(fnt, text, mid, tracking)
        if len(trial) <= len(lines):
            best, hi = trial, mid
        else:
            lo = mid
    return best


def fit_text(
    text: str,
    face: str,
    box_w: int,
    box_h: int,
    *,
    max_size: int,
    min_size: int,
    max_lines: int,
    tracking: float = 0.0,
    balance: bool = True,
) -> FittedText:
    """The largest size (from ``max_size`` down to ``min_size``) at which ``text`` wraps into at
    most ``max_lines`` lines inside ``box_w`` × ``box_h``. When even ``min_size`` does not fit,
    the lines that fit are kept and the last one ends in an ellipsis: the result is always
    inside the box."""
    text = " ".join(text.split())
    min_size = max(6, min(min_size, max_size))
    size = max_size
    while True:
        fnt = font(face, size)
        lines = wrap(fnt, text, box_w, tracking)
        line_h, width, height = _measure(face, size, lines, tracking)
        if (len(lines) <= max_lines and height <= box_h) or size <= min_size:
            break
        size = max(min_size, int(size * 0.94))
    truncated = False
    if len(lines) > max_lines or height > box_h:
        truncated = True
        lines = _truncate(face, size, lines, box_w, box_h, max_lines, tracking)
    elif balance:
        lines = _balance(fnt, text, lines, tracking)
    line_h, width, height = _measure(face, size, lines, tracking)
    return FittedText(face, size, tuple(lines), line_h, width, height, tracking, truncated)


def _truncate(
    face: str,
    size: int,
    lines: list[str],
    box_w: int,
    box_h: int,
    max_lines: int,
    tracking: float,
) -> list[str]:
    fnt = font(face, size)
    ascent, descent = fnt.getmetrics()
    line_h = max(1, round(size * LINE_SPACING))
    room = 1 + max(0, (box_h - ascent - descent) // line_h) if box_h >= ascent + descent else 0
    keep = max(0, min(max_lines, room, len(lines)))
    if keep == 0:
        return []
    kept = lines[:keep]
    last = kept[-1].rstrip("-")
    while last and text_width(fnt, last + ELLIPSIS, tracking) > box_w:
        last = last[:-1].rstrip()
    kept[-1] = last + ELLIPSIS if last else ELLIPSIS
    return kept


# ---- contrast (WCAG 2.x) ---------------------------------------------------------------------

FloatArray = npt.NDArray[np.float64]


def relative_luminance(rgb: npt.ArrayLike) -> FloatArray:
    """WCAG relative luminance of sRGB colours given as 0..255 values (any leading shape)."""
    c = np.asarray(rgb, dtype=np.float64) / 255.0
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return np.asarray(lin @ np.array([0.2126, 0.7152, 0.0722]), dtype=np.float64)


def contrast_ratio(a: npt.ArrayLike, b: npt.ArrayLike) -> FloatArray:
    """WCAG contrast ratio (1..21) between colours ``a`` and ``b`` (broadcast)."""
    la, lb = relative_luminance(a), relative_luminance(b)
    hi, lo = np.maximum(la, lb), np.minimum(la, lb)
    return np.asarray((hi + 0.05) / (lo + 0.05), dtype=np.float64)


def worst_contrast(color: tuple[int, int, int], pixels: npt.NDArray[np.uint8]) -> float:
    """The lowest contrast between ``color`` and any pixel of ``pixels`` (``(..., 3)``)."""
    if pixels.size == 0:
        return 21.0
    return float(contrast_ratio(np.array(color, dtype=np.float64), pixels.reshape(-1, 3)).min())
