"""What a product upload says about itself when the caller gave no category or description:
measured facts (size, transparency, main colours), never invented ones."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

# Coarse named colours for the description; the nearest one (in RGB) names a cluster.
_NAMES: dict[str, tuple[int, int, int]] = {
    "black": (20, 20, 20),
    "white": (245, 245, 245),
    "grey": (128, 128, 128),
    "red": (200, 40, 40),
    "orange": (235, 135, 35),
    "yellow": (235, 215, 50),
    "green": (50, 160, 70),
    "teal": (40, 150, 150),
    "blue": (45, 95, 190),
    "purple": (130, 60, 170),
    "pink": (235, 130, 175),
    "brown": (120, 75, 40),
    "beige": (220, 200, 165),
}


def colour_name(rgb: npt.NDArray[np.float64]) -> str:
    names = list(_NAMES)
    table = np.array([_NAMES[n] for n in names], dtype=np.float64)
    return names[int(np.argmin(((table - rgb) ** 2).sum(axis=1)))]


def main_colours(pixels: npt.NDArray[np.uint8], limit: int = 2) -> list[str]:
    """The names of the most frequent colours of the image's subject: opaque pixels of an RGBA
    upload, else the pixels that differ from the border colour."""
    step = max(1, max(pixels.shape[:2]) // 128)
    small = pixels[::step, ::step]
    rgb = small[..., :3].reshape(-1, 3).astype(np.float64)
    if small.shape[2] == 4:
        keep = small[..., 3].reshape(-1) > 127
    else:
        border = np.concatenate(
            [small[0, :, :3], small[-1, :, :3], small[:, 0, :3], small[:, -1, :3]]
        ).astype(np.float64)
        ref = np.median(border, axis=0)
        keep = np.abs(rgb - ref).sum(axis=1) > 60
    subject = rgb[keep] if keep.sum() >= 16 else rgb
    counts: dict[str, int] = {}
    for name in (colour_name(p) for p in subject[:: max(1, len(subject) // 4000)]):
        counts[name] = counts.get(name, 0) + 1
    ranked = sorted(counts, key=lambda n: -counts[n])
    return ranked[:limit]


def describe(pixels: npt.NDArray[np.uint8]) -> str:
    """A factual one-line description: main colours, size, transparency."""
    h, w = pixels.shape[:2]
    colours = main_colours(pixels)
    alpha = pixels.shape[2] == 4 and bool((pixels[..., 3] < 250).any())
    parts = [" and ".join(colours) + " product" if colours else "product"]
    parts.append(f"photo {w}x{h} px")
    if alpha:
        parts.append("transparent background")
    return ", ".join(parts)
