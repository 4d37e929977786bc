"""Burned-in subtitles from word timings: short chunks of words at the lower third, the word
being spoken highlighted, white text with a dark outline (the runtime's sans-bold face, DejaVu
Sans Bold; PIL's built-in font when it is missing)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.fonts import font_or_builtin
from pixelmill.engines.speech import WordTiming

MAX_WORDS = 3
MAX_CHARS = 20
HOLD = 0.35
"""Seconds a chunk stays up after its last word when the next one is not due yet."""
WHITE = (255, 255, 255, 255)
HIGHLIGHT = (255, 214, 10, 255)
OUTLINE = (0, 0, 0, 255)


@dataclass(frozen=True)
class Chunk:
    words: tuple[WordTiming, ...]
    start: float
    end: float


def chunk_words(words: Sequence[WordTiming]) -> list[Chunk]:
    groups: list[list[WordTiming]] = []
    for word in words:
        current = groups[-1] if groups else None
        if (
            current is not None
            and len(current) < MAX_WORDS
            and len(" ".join(w.word for w in current)) + 1 + len(word.word) <= MAX_CHARS
            and word.start - current[-1].end < 0.25
        ):
            current.append(word)
        else:
            groups.append([word])
    chunks: list[Chunk] = []
    for i, group in enumerate(groups):
        next_start = groups[i + 1][0].start if i + 1 < len(groups) else float("inf")
        end = min(group[-1].end + HOLD, next_start)
        chunks.append(Chunk(tuple(group), group[0].start, end))
    return chunks


class Subtitles:
    """Draws the chunk due at a time onto a frame (patches cached per chunk and word)."""

    def __init__(self, words: Sequence[WordTiming], width: int, height: int) -> None:
        self.chunks = chunk_words(words)
        self.width, self.height = width, height
        self.size = max(18, round(min(width, height) * 0.075))
        self.stroke = max(2, self.size // 12)
        self.baseline = round(height * (0.80 if height > width else 0.84))
        self._cache: dict[tuple[int, int], tuple[ImageArray, int, int]] = {}

    def _patch(self, ci: int, wi: int) -> tuple[ImageArray, int, int]:
        key = (ci, wi)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        f = font_or_builtin("sans-bold", self.size)
        words = [w.word for w in self.chunks[ci].words]
        space = f.getlength(" ")
        widths = [f.getlength(w) for w in words]
        total = sum(widths) + space * (len(words) - 1)
        scale = min(1.0, (self.width * 0.9) / max(total, 1.0))
        if scale < 1.0:  # a very long word: shrink to fit the width
            f = font_or_builtin("sans-bold", max(12, int(self.size * scale)))
            space = f.getlength(" ")
            widths = [f.getlength(w) for w in words]
            total = sum(widths) + space * (len(words) - 1)
        pad = self.stroke * 2 + 4
        ascent, descent = f.getmetrics() if isinstance(f, ImageFont.FreeTypeFont) else (12, 4)
        w = int(total) + 2 * pad
        h = ascent + descent + 2 * pad
        img = Image.new("RGBA", (w, h), (0, 0, 0, 0))
        draw = ImageDraw.Draw(img)
        x = float(pad)
        for i, (word, ww) in enumerate(zip(words, widths, strict=True)):
            fill = HIGHLIGHT if i == wi else WHITE
            draw.text(
                (x, pad), word, font=f, fill=fill, stroke_width=self.stroke, stroke_fill=OUTLINE
            )
            x += ww + space
        patch = np.asarray(img, dtype=np.uint8)
        px = (self.width - w) // 2
        py = self.baseline - h // 2
        self._cache[key] = (patch, px, py)
        return self._cache[key]

    def draw(self, frame: ImageArray, t: float) -> None:
        """Draw, in place, the chunk shown at time ``t`` (seconds)."""
        for ci, chunk in enumerate(self.chunks):
            if chunk.start <= t < chunk.end:
                wi = 0
                for i, word in enumerate(chunk.words):
                    if t >= word.start:
                        wi = i
                patch, px, py = self._patch(ci, wi)
                _blend(frame, patch, px, py)
                return


def _blend(frame: ImageArray, patch: ImageArray, x: int, y: int) -> None:
    h, w = patch.shape[:2]
    fh, fw = frame.shape[:2]
    x0, y0, x1, y1 = max(0, x), max(0, y), min(fw, x + w), min(fh, y + h)
    if x1 <= x0 or y1 <= y0:
        return
    sub = patch[y0 - y : y1 - y, x0 - x : x1 - x].astype(np.float32)
    alpha = sub[..., 3:4] / 255.0
    region = frame[y0:y1, x0:x1].astype(np.float32)
    frame[y0:y1, x0:x1] = (sub[..., :3] * alpha + region * (1 - alpha)).astype(np.uint8)
