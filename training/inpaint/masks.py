"""Training and validation samples for pixelmill-inpaint: photo crops with opaque overlay
strokes drawn on them, the mask the engine would fill, and OpenCV Telea's first fill.

Masks come from the overlay generator (``training/overlay/data.py``: captions with outlines and
shadows, corner logos with rings and boxes) thresholded at a random alpha (0.05-0.5) and grown
by 0-2 px, as the engine's masks are (its opacity head is thresholded, then regions are kept
whole); a fifth are free-form strokes and blobs (lines 2-14 px wide, ellipses) in a random
colour, standing in for the logos and shapes the generator does not draw. Outside the mask the
observed image keeps whatever the overlay left there (anti-aliased fringes, shadows): the
network has to live with them, as it does in the engine.
"""

from __future__ import annotations

import itertools
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

sys.path.append(str(Path(__file__).resolve().parents[1] / "overlay"))
import data as overlay  # training/overlay/data.py

TELEA_RADIUS = 3
"""As the engine's ``unmix.Settings.telea_radius``."""


def scribble(rng: random.Random, h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Free-form opaque strokes: (alpha 0..1 float32, colour (3,) float32)."""
    m = np.zeros((h, w), np.uint8)
    for _ in range(rng.randint(1, 4)):
        if rng.random() < 0.7:
            pts = [(rng.randrange(w), rng.randrange(h)) for _ in range(rng.randint(2, 5))]
            width = rng.randint(2, 14)
            for a, b in itertools.pairwise(pts):
                cv2.line(m, a, b, 255, width, cv2.LINE_AA)
        else:
            centre = (rng.randrange(w), rng.randrange(h))
            axes = (rng.randint(2, max(3, w // 6)), rng.randint(2, max(3, h // 6)))
            cv2.ellipse(m, centre, axes, rng.uniform(0, 180), 0, 360, 255, -1, cv2.LINE_AA)
    return m.astype(np.float32) / 255.0, overlay.random_colour(rng)


def strokes(rng: random.Random, clean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(observed uint8, mask bool) for one clean uint8 crop."""
    h, w = clean.shape[:2]
    r = rng.random()
    if r < 0.8:
        ov = overlay.caption(rng, h, w) if r < 0.55 else overlay.logo(rng, h, w)
        alpha = ov.alpha
        observed = ov.apply(clean)
    else:
        alpha, colour = scribble(rng, h, w)
        x = clean.astype(np.float32) / 255.0
        y = (1.0 - alpha[..., None]) * x + alpha[..., None] * colour
        observed = np.clip(np.round(y * 255.0), 0, 255).astype(np.uint8)
    mask = alpha >= rng.uniform(0.05, 0.5)
    grow = rng.choice((0, 1, 1, 2))
    if grow and mask.any():
        size = 2 * grow + 1
        mask = cv2.dilate(mask.astype(np.uint8), np.ones((size, size), np.uint8)) > 0
    return observed, mask


def telea(observed: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.asarray(
        cv2.inpaint(observed, mask.astype(np.uint8) * 255, TELEA_RADIUS, cv2.INPAINT_TELEA),
        np.uint8,
    )


class Sampler:
    """Random crops (with flips) of the training photos, each with strokes on it."""

    def __init__(self, images: list[np.ndarray], patch: int, seed: int) -> None:
        self.images = images
        self.patch = patch
        self.rng = random.Random(seed)
        self.nprng = np.random.default_rng(seed)
        sizes = np.array([im.shape[0] * im.shape[1] for im in images], np.float64)
        self.prob = sizes / sizes.sum()

    def sample(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        p = self.patch
        while True:
            im = self.images[int(self.nprng.choice(len(self.images), p=self.prob))]
            h, w = im.shape[:2]
            i, j = self.rng.randrange(0, h - p + 1), self.rng.randrange(0, w - p + 1)
            clean = np.ascontiguousarray(im[i : i + p, j : j + p])
            if self.rng.random() < 0.5:
                clean = np.ascontiguousarray(clean[:, ::-1])
            observed, mask = strokes(self.rng, clean)
            if 0.002 < mask.mean() < 0.6:
                return telea(observed, mask), mask, clean

    def batch(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(inputs (n, 4, p, p): first fill RGB + mask, targets (n, 3, p, p)), float32 0..1."""
        first, mask, clean = zip(*(self.sample() for _ in range(n)), strict=True)
        f = np.stack(first).astype(np.float32).transpose(0, 3, 1, 2) / 255.0
        m = np.stack(mask)[:, None].astype(np.float32)
        c = np.stack(clean).astype(np.float32).transpose(0, 3, 1, 2) / 255.0
        return np.concatenate([f, m], axis=1), c


@dataclass
class ValSample:
    name: str
    observed: np.ndarray
    mask: np.ndarray
    first: np.ndarray
    clean: np.ndarray


def validation(paths: list[Path], seed: int = 7, max_side: int = 512) -> list[ValSample]:
    """Two samples per held-out photo (fixed by ``seed``), whole photos capped at ``max_side``."""
    out: list[ValSample] = []
    for n, path in enumerate(paths):
        clean = overlay.load_rgb(path, max_side)
        for k in range(2):
            rng = random.Random(seed * 1000 + n * 10 + k)
            observed, mask = strokes(rng, clean)
            if not mask.any():
                continue
            name = f"{path.parent.name}/{path.name}#{k}"
            out.append(ValSample(name, observed, mask, telea(observed, mask), clean))
    return out
