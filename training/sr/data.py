"""Training data for pixelmill-sr: decode once, hold out a seeded validation split, and sample
aligned LR/HR luma crops whose LR side went through a *randomly drawn* degradation per patch.

Real uploads are not all downscaled the same way: phones, CMSs and ``cv2.resize`` often skip the
antialiasing filter, many images were JPEG-compressed or are slightly noisy or soft. One model
must be safe on all of them without detecting which one it got, so every training patch draws
its own degradation (``sample_degradation``): a downscaling kernel (PIL bicubic/bilinear with
antialiasing, OpenCV cubic/linear without, area, PIL and OpenCV nearest), optionally a mild
Gaussian blur of the HR patch before it, mild Gaussian noise after it, and JPEG compression
(quality 60-95) last. The target is always the clean HR patch.

``EVAL_DEGRADATIONS`` are the fixed conditions the hold-out is scored under (train.py logs a
subset, bench/bench_sr.py all of them)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

FOLDERS = ("CBSD68", "CSun_Hays80", "CUrban100")
# Validation images per folder, roughly proportional to the folder sizes (68 / 80 / 50).
VAL_PER_FOLDER = {"CBSD68": 3, "CSun_Hays80": 4, "CUrban100": 3}
# Sampling weight per folder (per pixel): the Sun-Hays JPEGs carry compression artefacts.
FOLDER_WEIGHT = {"CBSD68": 1.0, "CSun_Hays80": 0.5, "CUrban100": 1.0}

# Downscaling kernels. "pil_*" resample with PIL's antialiasing filter (support widened by the
# scale); "cv2_cubic" / "cv2_linear" / "cv2_nearest" sample the HR image without a prefilter
# (aliasing, what cv2.resize and many phone pipelines produce); "cv2_area" averages boxes.
KERNELS = (
    "pil_bicubic",
    "cv2_cubic",
    "cv2_area",
    "pil_bilinear",
    "cv2_linear",
    "pil_nearest",
    "cv2_nearest",
)
# Training draw: clean PIL bicubic (the old protocol and the most common good path) gets 30 %,
# the others share the rest equally.
KERNEL_PROB = np.array([0.30] + [0.70 / 6] * 6)
P_BLUR, P_NOISE, P_JPEG = 0.2, 0.2, 0.3


@dataclass(frozen=True)
class Degradation:
    kernel: str = "pil_bicubic"
    blur: float = 0.0  # Gaussian sigma in HR pixels applied before downscaling (0: none)
    noise: float = 0.0  # Gaussian noise sigma in 0..255 levels added to the LR RGB (0: none)
    jpeg: int = 0  # JPEG quality of the LR RGB (0: none)


# The conditions the hold-out is scored under: every kernel alone, and blur / noise / JPEG on
# top of the clean bicubic downscale.
EVAL_DEGRADATIONS: dict[str, Degradation] = {
    "bicubic (PIL, antialiased)": Degradation("pil_bicubic"),
    "bicubic (cv2, no antialias)": Degradation("cv2_cubic"),
    "area (cv2)": Degradation("cv2_area"),
    "bilinear (PIL, antialiased)": Degradation("pil_bilinear"),
    "bilinear (cv2, no antialias)": Degradation("cv2_linear"),
    "nearest (PIL)": Degradation("pil_nearest"),
    "nearest (cv2)": Degradation("cv2_nearest"),
    "blur s=1.0 + bicubic": Degradation("pil_bicubic", blur=1.0),
    "bicubic + noise s=3": Degradation("pil_bicubic", noise=3.0),
    "bicubic + JPEG q60": Degradation("pil_bicubic", jpeg=60),
    "bicubic + JPEG q85": Degradation("pil_bicubic", jpeg=85),
}
# What train.py logs (a cheap subset; the last value is the one checkpoints are ranked by).
TRAIN_EVAL = (
    "bicubic (PIL, antialiased)",
    "bicubic (cv2, no antialias)",
    "nearest (cv2)",
    "bicubic + JPEG q60",
)


def parse_kernel_prob(text: str) -> np.ndarray:
    """``--kernel-prob``: seven comma-separated weights in the order of ``KERNELS``
    (normalised to sum to 1), e.g. ``0.3,0.1,0.1,0.1,0.1,0.15,0.15``."""
    w = np.array([float(v) for v in text.split(",")], dtype=np.float64)
    if w.shape != (len(KERNELS),) or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"need {len(KERNELS)} non-negative weights ({', '.join(KERNELS)})")
    return w / w.sum()


def sample_degradation(
    rng: np.random.Generator,
    scale: int,
    clean: float = 0.0,
    kernel_prob: np.ndarray | None = None,
) -> Degradation:
    """One random degradation; with probability ``clean`` the plain PIL bicubic downscale
    (no blur, noise or JPEG), otherwise the full draw (which includes it too). The kernel is
    drawn with ``kernel_prob`` (``KERNEL_PROB`` when None)."""
    if clean > 0 and rng.random() < clean:
        return Degradation()
    prob = KERNEL_PROB if kernel_prob is None else kernel_prob
    kernel = KERNELS[int(rng.choice(len(KERNELS), p=prob))]
    blur = float(rng.uniform(0.3, 0.6 * scale)) if rng.random() < P_BLUR else 0.0
    noise = float(rng.uniform(1.0, 5.0)) if rng.random() < P_NOISE else 0.0
    jpeg = int(rng.integers(60, 96)) if rng.random() < P_JPEG else 0
    return Degradation(kernel, blur, noise, jpeg)


_PIL = {
    "pil_bicubic": Image.Resampling.BICUBIC,
    "pil_bilinear": Image.Resampling.BILINEAR,
    "pil_nearest": Image.Resampling.NEAREST,
}
_CV2 = {
    "cv2_cubic": cv2.INTER_CUBIC,
    "cv2_linear": cv2.INTER_LINEAR,
    "cv2_area": cv2.INTER_AREA,
    "cv2_nearest": cv2.INTER_NEAREST,
}


def resize_down(rgb: np.ndarray, scale: int, kernel: str) -> np.ndarray:
    """Downscale uint8 RGB (a multiple of ``scale``) by ``scale`` with one of ``KERNELS``."""
    h, w = rgb.shape[:2]
    if kernel in _PIL:
        im = Image.fromarray(np.ascontiguousarray(rgb)).resize(
            (w // scale, h // scale), _PIL[kernel]
        )
        return np.asarray(im)
    return cv2.resize(
        np.ascontiguousarray(rgb), (w // scale, h // scale), interpolation=_CV2[kernel]
    )


def degrade(
    hr_rgb: np.ndarray, scale: int, d: Degradation, rng: np.random.Generator | None = None
) -> np.ndarray:
    """HR uint8 RGB -> LR uint8 RGB under degradation ``d`` (noise drawn from ``rng``, or a
    fixed seed when none is given, so evaluation is repeatable)."""
    x = hr_rgb
    if d.blur > 0:
        x = cv2.GaussianBlur(np.ascontiguousarray(x), (0, 0), d.blur, borderType=cv2.BORDER_REFLECT)
    lr = resize_down(x, scale, d.kernel)
    if d.noise > 0:
        rng = rng if rng is not None else np.random.default_rng(0)
        n = rng.normal(0.0, d.noise, lr.shape)
        lr = np.clip(np.rint(lr.astype(np.float32) + n), 0, 255).astype(np.uint8)
    if d.jpeg > 0:
        ok, buf = cv2.imencode(".jpg", lr[..., ::-1], [cv2.IMWRITE_JPEG_QUALITY, d.jpeg])
        assert ok
        lr = cv2.imdecode(buf, cv2.IMREAD_COLOR)[..., ::-1]
    return np.ascontiguousarray(lr)


def rgb_to_y(rgb: np.ndarray) -> np.ndarray:
    """BT.601 studio-range luma in [16, 235] / 255, float32 (the usual SR protocol)."""
    x = rgb.astype(np.float32)
    y = 16.0 + (65.481 * x[..., 0] + 128.553 * x[..., 1] + 24.966 * x[..., 2]) / 255.0
    return (y / 255.0).astype(np.float32)


def downscale_rgb(rgb: np.ndarray, scale: int) -> np.ndarray:
    """Bicubic (a = -0.5) downscale with antialiasing; ``rgb`` must be a multiple of ``scale``."""
    return resize_down(rgb, scale, "pil_bicubic")


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
    lr: np.ndarray  # (h, w) float32 luma of the degraded, downscaled RGB image
    hr: np.ndarray  # (h * s, w * s) float32 luma


def make_pair(path: Path, scale: int, d: Degradation | None = None) -> Pair:
    hr_rgb = crop_to_multiple(load_rgb(path), scale)
    lr_rgb = degrade(hr_rgb, scale, d or Degradation())
    return Pair(path.name, path.parent.name, rgb_to_y(lr_rgb), rgb_to_y(hr_rgb))


@dataclass
class Source:
    folder: str
    rgb: np.ndarray  # HR uint8 RGB, a multiple of the scale


def load_sources(paths: list[Path], scale: int) -> list[Source]:
    return [Source(p.parent.name, crop_to_multiple(load_rgb(p), scale)) for p in paths]


class PatchSampler:
    """Random aligned crops with a degradation drawn per patch: an HR RGB crop (with a border of
    ``BORDER`` LR pixels so the blur and the downscaling filters see real context) is flipped /
    rotated, degraded to LR, and the LR luma patch of ``patch + 2 * margin`` pixels is paired
    with the HR luma target of its central ``patch`` pixels.

    With ``region`` > 0 the crop that is degraded is larger, up to ``region`` LR pixels a side
    (less where the photo is smaller), with the patch at its centre, and ``batch`` also returns
    that region's LR luma: a context network's image statistics are then measured over a stretch
    of photo closer to the whole uploads they are measured on at run time than one patch is."""

    BORDER = 4

    def __init__(
        self,
        sources: list[Source],
        scale: int,
        patch: int,
        margin: int,
        seed: int,
        clean: float = 0.0,
        kernel_prob: np.ndarray | None = None,
        region: int = 0,
    ) -> None:
        self.sources = sources
        self.clean = clean
        self.kernel_prob = kernel_prob
        self.scale = scale
        self.patch = patch
        self.margin = margin
        self.region = region
        self.rng = np.random.default_rng(seed)
        w = np.array(
            [s.rgb.shape[0] * s.rgb.shape[1] * FOLDER_WEIGHT[s.folder] for s in sources],
            dtype=np.float64,
        )
        self.prob = w / w.sum()

    def batch(self, n: int) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
        """``(xs, ys, regions)``: LR patches (n, 1, patch + 2 margin, same), HR targets
        (n, 1, patch * scale, same), and each patch's context region as LR luma (the patch
        itself when ``region`` is 0)."""
        s, p, m, b = self.scale, self.patch, self.margin, self.BORDER
        size = p + 2 * m
        xs = np.empty((n, 1, size, size), np.float32)
        ys = np.empty((n, 1, p * s, p * s), np.float32)
        regions: list[np.ndarray] = []
        k = 0
        while k < n:
            src = self.sources[int(self.rng.choice(len(self.sources), p=self.prob))]
            h, w = src.rgb.shape[0] // s, src.rgb.shape[1] // s
            if h < size + 2 * b or w < size + 2 * b:
                continue
            rh = max(size, min(self.region, h - 2 * b))  # region side in LR pixels
            rw = max(size, min(self.region, w - 2 * b))
            i = int(self.rng.integers(0, h - (rh + 2 * b) + 1))
            j = int(self.rng.integers(0, w - (rw + 2 * b) + 1))
            hr_rgb = src.rgb[i * s : (i + rh + 2 * b) * s, j * s : (j + rw + 2 * b) * s]
            t = int(self.rng.integers(0, 8))
            if t & 1:
                hr_rgb = hr_rgb[:, ::-1]
            if t & 2:
                hr_rgb = hr_rgb[::-1]
            if t & 4:
                hr_rgb = hr_rgb.transpose(1, 0, 2)
                rh, rw = rw, rh
            # The patch sits at the centre of the region.
            oy, ox = b + (rh - size) // 2, b + (rw - size) // 2
            hy, hx = (oy + m) * s, (ox + m) * s
            hr = rgb_to_y(hr_rgb[hy : hy + p * s, hx : hx + p * s])
            # Skip most nearly flat patches: they teach little and dominate natural photos.
            if hr.std() < 0.008 and self.rng.random() < 0.7:
                continue
            d = sample_degradation(self.rng, s, self.clean, self.kernel_prob)
            lr_y = rgb_to_y(degrade(hr_rgb, s, d, self.rng))
            xs[k, 0] = lr_y[oy : oy + size, ox : ox + size]
            ys[k, 0] = hr
            regions.append(lr_y[b : b + rh, b : b + rw] if self.region else xs[k, 0])
            k += 1
        return xs, ys, regions
