"""Training data for pixelmill-sr: decode once, hold out a seeded validation split, make LR by
bicubic downscaling with antialiasing (PIL ``Image.BICUBIC`` on the uint8 RGB image, as a user's
upload would be), and sample aligned random LR/HR crops of the luma channel."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

FOLDERS = ("CBSD68", "CSun_Hays80", "CUrban100")
# Validation images per folder, roughly proportional to the folder sizes (68 / 80 / 50).
VAL_PER_FOLDER = {"CBSD68": 3, "CSun_Hays80": 4, "CUrban100": 3}
# Sampling weight per folder (per pixel): the Sun-Hays JPEGs carry compression artefacts.
FOLDER_WEIGHT = {"CBSD68": 1.0, "CSun_Hays80": 0.5, "CUrban100": 1.0}


def rgb_to_y(rgb: np.ndarray) -> np.ndarray:
    """BT.601 studio-range luma in [16, 235] / 255, float32 (the usual SR protocol)."""
    x = rgb.astype(np.float32)
    y = 16.0 + (65.481 * x[..., 0] + 128.553 * x[..., 1] + 24.966 * x[..., 2]) / 255.0
    return (y / 255.0).astype(np.float32)


def downscale_rgb(rgb: np.ndarray, scale: int) -> np.ndarray:
    """Bicubic (a = -0.5) downscale with antialiasing; ``rgb`` must be a multiple of ``scale``."""
    h, w = rgb.shape[:2]
    im = Image.fromarray(rgb).resize((w // scale, h // scale), Image.Resampling.BICUBIC)
    return np.asarray(im)


def crop_to_multiple(rgb: np.ndarray, m: int) -> np.ndarray:
    h, w = rgb.shape[:2]
    return rgb[: h - h % m, : w - w % m]


def folder_images(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in {".png", ".jpg", ".jpeg"})


def list_images(root: Path) -> list[Path]:
    out: list[Path] = []
    for folder in FOLDERS:
        out.extend(folder_images(root / folder))
    return out


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


def load_rgb(path: Path) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


@dataclass
class Pair:
    name: str
    folder: str
    lr: np.ndarray  # (h, w) float32 luma of the downscaled RGB image
    hr: np.ndarray  # (h * s, w * s) float32 luma


def make_pair(path: Path, scale: int) -> Pair:
    hr_rgb = crop_to_multiple(load_rgb(path), scale)
    lr_rgb = downscale_rgb(hr_rgb, scale)
    return Pair(path.name, path.parent.name, rgb_to_y(lr_rgb), rgb_to_y(hr_rgb))


class PatchSampler:
    """Random aligned crops: an LR patch of ``patch + 2 * margin`` pixels and the HR target for
    its central ``patch`` pixels, with a random flip / 90-degree rotation (which commute with the
    symmetric bicubic downscale)."""

    def __init__(self, pairs: list[Pair], scale: int, patch: int, margin: int, seed: int) -> None:
        self.pairs = pairs
        self.scale = scale
        self.patch = patch
        self.margin = margin
        self.rng = np.random.default_rng(seed)
        w = np.array([p.lr.size * FOLDER_WEIGHT[p.folder] for p in pairs], dtype=np.float64)
        self.prob = w / w.sum()

    def batch(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        s, p, m = self.scale, self.patch, self.margin
        size = p + 2 * m
        xs = np.empty((n, 1, size, size), np.float32)
        ys = np.empty((n, 1, p * s, p * s), np.float32)
        k = 0
        while k < n:
            pair = self.pairs[self.rng.choice(len(self.pairs), p=self.prob)]
            h, w = pair.lr.shape
            i = int(self.rng.integers(0, h - size + 1))
            j = int(self.rng.integers(0, w - size + 1))
            lr = pair.lr[i : i + size, j : j + size]
            hr = pair.hr[(i + m) * s : (i + m + p) * s, (j + m) * s : (j + m + p) * s]
            # Skip most nearly flat patches: they teach little and dominate natural photos.
            if hr.std() < 0.008 and self.rng.random() < 0.7:
                continue
            t = int(self.rng.integers(0, 8))
            if t & 1:
                lr, hr = lr[:, ::-1], hr[:, ::-1]
            if t & 2:
                lr, hr = lr[::-1], hr[::-1]
            if t & 4:
                lr, hr = lr.T, hr.T
            xs[k, 0] = lr
            ys[k, 0] = hr
            k += 1
        return xs, ys
