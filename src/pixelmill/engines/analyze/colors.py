"""Dominant colours: a k-means palette in CIELAB with human colour names.

The names come from a small table of common colour words (the CSS/X11 names people actually
use) matched by nearest CIELAB distance, so "navy" and "teal" mean what a reader expects.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.colour import to_lab

NAMED_COLOURS: dict[str, str] = {
    "black": "#000000",
    "charcoal": "#36454f",
    "dark gray": "#555555",
    "gray": "#808080",
    "silver": "#c0c0c0",
    "light gray": "#dcdcdc",
    "white": "#ffffff",
    "cream": "#fffdd0",
    "beige": "#e8d8b8",
    "tan": "#d2b48c",
    "khaki": "#c3b091",
    "brown": "#8b5a2b",
    "dark brown": "#4a2c17",
    "maroon": "#800000",
    "red": "#d62828",
    "crimson": "#a4161a",
    "coral": "#ff7f50",
    "salmon": "#fa8072",
    "pink": "#ffb6c1",
    "hot pink": "#ff69b4",
    "magenta": "#d81b9a",
    "purple": "#7b2d8e",
    "lavender": "#b9a6e0",
    "navy": "#1b2a5a",
    "blue": "#2f5fd0",
    "sky blue": "#87ceeb",
    "light blue": "#bcd8ef",
    "steel blue": "#4682b4",
    "teal": "#008080",
    "turquoise": "#40e0d0",
    "cyan": "#00d5e5",
    "dark green": "#1e4d2b",
    "green": "#2e9b44",
    "olive": "#708238",
    "lime": "#9acd32",
    "mint": "#b2e3c4",
    "yellow": "#f5d90a",
    "gold": "#d4a017",
    "mustard": "#c9a227",
    "orange": "#f07f13",
    "burnt orange": "#cc5500",
    "rust": "#b7410e",
    "taupe": "#7c6a5a",
    "peach": "#ffcba4",
    "skin tone": "#e0ac8a",
}
"""Colour words → representative sRGB. "skin tone" is included because portraits are common
and "peach" or "tan" read oddly for faces."""


def _hex_to_rgb(value: str) -> tuple[int, int, int]:
    return (int(value[1:3], 16), int(value[3:5], 16), int(value[5:7], 16))


_NAMES = list(NAMED_COLOURS)
_NAME_LAB = to_lab(np.array([[_hex_to_rgb(NAMED_COLOURS[n]) for n in _NAMES]], dtype=np.uint8))[0]


def colour_name(rgb: tuple[int, int, int]) -> str:
    """The nearest colour word (CIELAB ΔE*76) for an sRGB triple."""
    lab = to_lab(np.array([[rgb]], dtype=np.uint8))[0, 0]
    return _NAMES[int(np.argmin(np.linalg.norm(_NAME_LAB - lab, axis=1)))]


def to_hex(rgb: tuple[int, int, int]) -> str:
    """``(r, g, b)`` → ``"#rrggbb"``."""
    return "#{:02x}{:02x}{:02x}".format(*rgb)


@dataclass(frozen=True)
class PaletteColour:
    """One palette entry: the cluster's mean colour and its share of the (opaque) pixels."""

    name: str
    hex: str
    rgb: tuple[int, int, int]
    percentage: float

    def as_dict(self) -> dict[str, object]:
        """The JSON shape clients read: ``name``, ``hex``, ``percentage``."""
        return {"name": self.name, "hex": self.hex, "percentage": self.percentage}


SAMPLE_SIDE = 128
"""The palette is computed on a copy at most this size (≈16 k pixels): plenty for five
clusters, and it keeps k-means to a few milliseconds."""


def dominant_colours(
    image: ImageArray, k: int = 5, alpha: npt.NDArray[np.uint8] | None = None
) -> list[PaletteColour]:
    """The ``k`` dominant colours, largest share first; percentages sum to exactly 100.

    k-means (k-means++ seeding, 3 attempts, a fixed RNG seed so results are repeatable) runs
    in CIELAB so clusters follow perceived colour differences. Pixels with ``alpha`` below 128
    are left out. Fewer than ``k`` entries come back when the image has fewer distinct
    colours."""
    rgb = np.ascontiguousarray(image[..., :3])
    h, w = rgb.shape[:2]
    f = min(1.0, SAMPLE_SIDE / max(h, w))
    size = (max(1, round(w * f)), max(1, round(h * f)))
    small = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
    pixels = to_lab(np.asarray(small, dtype=np.uint8)).reshape(-1, 3)
    if alpha is not None:
        a_small = cv2.resize(alpha, size, interpolation=cv2.INTER_AREA).reshape(-1)
        pixels = pixels[a_small >= 128]
    if pixels.shape[0] == 0:
        return []
    distinct = np.unique(np.round(pixels).astype(np.int16), axis=0).shape[0]
    if distinct == 1 or pixels.shape[0] < 2:
        # One colour (or one pixel): nothing to cluster, and cv2.kmeans rejects a single sample.
        r, g, b = (
            int(v)
            for v in np.clip(
                cv2.cvtColor(pixels[:1].reshape(1, 1, 3), cv2.COLOR_LAB2RGB)[0, 0] * 255.0 + 0.5,
                0,
                255,
            )
        )
        return [PaletteColour(colour_name((r, g, b)), to_hex((r, g, b)), (r, g, b), 100.0)]
    k = max(1, min(k, distinct))
    cv2.setRNGSeed(12345)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 0.5)
    samples = np.ascontiguousarray(pixels, np.float32)
    # bestLabels is only read with KMEANS_USE_INITIAL_LABELS; k-means++ seeding ignores it.
    initial = np.zeros((samples.shape[0], 1), np.int32)
    _, labels, centres = cv2.kmeans(samples, k, initial, criteria, 3, cv2.KMEANS_PP_CENTERS)
    counts = np.bincount(labels.ravel(), minlength=k).astype(np.float64)
    order = np.argsort(-counts)
    centre_rgb = cv2.cvtColor(centres.reshape(1, -1, 3).astype(np.float32), cv2.COLOR_LAB2RGB)[0]
    shares = [round(float(c) / float(counts.sum()) * 100.0, 1) for c in counts[order]]
    # Rounding can leave the sum at 99.9 or 100.1; give the difference to the largest share.
    shares[0] = round(shares[0] + (100.0 - sum(shares)), 1)
    result: list[PaletteColour] = []
    for share, idx in zip(shares, order, strict=True):
        if counts[idx] == 0:
            continue
        r, g, b = (int(np.clip(round(float(v) * 255.0), 0, 255)) for v in centre_rgb[idx])
        result.append(PaletteColour(colour_name((r, g, b)), to_hex((r, g, b)), (r, g, b), share))
    return result
