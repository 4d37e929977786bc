"""Stronger saliency models dropped in by the operator: rembg-format ONNX files in
``PIXELMILL_MODELS_DIR`` (named as rembg names them: ``u2net.onnx``, ``isnet-general-use.onnx``,
``birefnet-general.onnx``...). Background removal uses the best one present instead of the
packaged U²-Net-p; nothing is ever downloaded.

Each family wants its own input preparation and output reading (as rembg's sessions do):

- U²-Net family (``u2net``, ``u2netp``, ``u2net_human_seg``, ``silueta``): 320², RGB divided
  by its maximum, ImageNet mean/std; the first output's first channel, min-max normalised.
- IS-Net (``isnet-general-use``, ``isnet-anime``): 1024², divided by the maximum, mean 0.5 and
  std 1.0; min-max normalised.
- BiRefNet (``birefnet-*``): 1024², ImageNet mean/std; the output is a logit, so a sigmoid
  before the min-max normalisation.
- BRIA RMBG (``bria-rmbg``): 1024², ImageNet mean/std; min-max normalised.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.onnx import OnnxModel

Mask = npt.NDArray[np.float32]

log = logging.getLogger("pixelmill.engines")

IMAGENET = ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
HALF = ((0.5, 0.5, 0.5), (1.0, 1.0, 1.0))


@dataclass(frozen=True)
class Family:
    """How a rembg model is fed and read. ``rank``: preference for general background removal
    (higher is better; ``None``: a specialist model, listed but never chosen automatically)."""

    kind: str
    size: int
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    sigmoid: bool
    rank: int | None


KNOWN: dict[str, Family] = {
    "birefnet-general": Family("birefnet", 1024, *IMAGENET, sigmoid=True, rank=100),
    "birefnet-massive": Family("birefnet", 1024, *IMAGENET, sigmoid=True, rank=95),
    "bria-rmbg": Family("bria", 1024, *IMAGENET, sigmoid=False, rank=90),
    "isnet-general-use": Family("isnet", 1024, *HALF, sigmoid=False, rank=80),
    "birefnet-general-lite": Family("birefnet", 1024, *IMAGENET, sigmoid=True, rank=70),
    "u2net": Family("u2net", 320, *IMAGENET, sigmoid=False, rank=50),
    "silueta": Family("u2net", 320, *IMAGENET, sigmoid=False, rank=40),
    "u2netp": Family("u2net", 320, *IMAGENET, sigmoid=False, rank=10),
    "birefnet-portrait": Family("birefnet", 1024, *IMAGENET, sigmoid=True, rank=None),
    "birefnet-dis": Family("birefnet", 1024, *IMAGENET, sigmoid=True, rank=None),
    "birefnet-hrsod": Family("birefnet", 1024, *IMAGENET, sigmoid=True, rank=None),
    "birefnet-cod": Family("birefnet", 1024, *IMAGENET, sigmoid=True, rank=None),
    "isnet-anime": Family("isnet", 1024, *HALF, sigmoid=False, rank=None),
    "u2net_human_seg": Family("u2net", 320, *IMAGENET, sigmoid=False, rank=None),
}
"""rembg's session names (its file names without ``.onnx``) and their families."""
KNOWN_MODELS = KNOWN


@dataclass(frozen=True)
class ModelFile:
    """One ONNX file in the models folder; ``family`` is None for a name rembg does not use."""

    name: str
    path: Path
    family: Family | None

    @property
    def size_bytes(self) -> int:
        return self.path.stat().st_size

    def sha256(self) -> str:
        digest = hashlib.sha256()
        with self.path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()


def find_models(folder: Path | None) -> list[ModelFile]:
    """The ``.onnx`` files directly in ``folder``, best first (unknown names last)."""
    if folder is None or not folder.is_dir():
        return []
    found = [
        ModelFile(p.stem, p, KNOWN.get(p.stem.lower()))
        for p in sorted(folder.glob("*.onnx"))
        if p.is_file()
    ]
    return sorted(found, key=lambda m: -(m.family.rank or 0) if m.family else 1)


def candidates(folder: Path | None) -> list[ModelFile]:
    """The general background-removal models in ``folder``, best first."""
    return [m for m in find_models(folder) if m.family is not None and m.family.rank is not None]


def best_model(folder: Path | None) -> ModelFile | None:
    """The best general background-removal model in ``folder`` that opens and has its
    family's input shape (a broken or truncated file is skipped, with a warning)."""
    for model in candidates(folder):
        check = verify_model(model, run=False)
        if check.ok:
            return model
        log.warning("PIXELMILL_MODELS_DIR: %s skipped: %s", model.path.name, check.problem)
    return None


class RembgSaliency:
    """A rembg-format model as a saliency source: :meth:`coarse` gives the raw foreground
    mask at the image's size (not edge-snapped), as the packaged U²-Net-p does."""

    def __init__(self, model: ModelFile) -> None:
        if model.family is None:
            raise ValueError(f"{model.path.name} is not a rembg model name this server knows")
        self.file = model
        self.family = model.family
        self.model = OnnxModel(model.path)

    @property
    def name(self) -> str:
        return self.file.name

    def load(self) -> None:
        self.model.load()

    def input_shape(self) -> list[Any]:
        shape: list[Any] = list(self.model.session.get_inputs()[0].shape)
        return shape

    def prepare(self, rgb: ImageArray) -> npt.NDArray[np.float32]:
        side = self.family.size
        h, w = rgb.shape[:2]
        shrink = side < max(h, w)
        small = cv2.resize(
            rgb, (side, side), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_CUBIC
        )
        x = small.astype(np.float32)
        peak = float(x.max())
        x /= max(peak, 1e-6)
        mean = np.asarray(self.family.mean, np.float32)
        std = np.asarray(self.family.std, np.float32)
        normalised = np.asarray((x - mean) / std, dtype=np.float32)
        return np.ascontiguousarray(normalised.transpose(2, 0, 1)[np.newaxis], dtype=np.float32)

    def coarse(self, image: ImageArray) -> Mask:
        """The model's foreground probability at ``image``'s size, 0..1."""
        rgb = np.ascontiguousarray(image[..., :3])
        h, w = rgb.shape[:2]
        pred = self.model.run_single(self.prepare(rgb))[0][0, 0].astype(np.float32)
        if self.family.sigmoid:
            pred = np.asarray(1.0 / (1.0 + np.exp(-pred)), dtype=np.float32)
        lo, hi = float(pred.min()), float(pred.max())
        pred = (pred - lo) / (hi - lo) if hi > lo else np.zeros_like(pred)
        out = cv2.resize(pred, (w, h), interpolation=cv2.INTER_LINEAR)
        return np.asarray(np.clip(out, 0.0, 1.0), dtype=np.float32)


@dataclass(frozen=True)
class Verification:
    name: str
    size_bytes: int
    sha256: str
    input_shape: list[Any] | None
    family: str | None
    ok: bool
    problem: str | None


def verify_model(model: ModelFile, run: bool = True) -> Verification:
    """Open ``model``, check its input is 1×3×S×S for its family's S and (``run``) that a
    small image gives a finite mask of the image's size."""
    size, digest = model.size_bytes, model.sha256()
    family = model.family.kind if model.family else None
    if model.family is None:
        return Verification(
            model.name, size, digest, None, None, False, "not a rembg model name (see docs)"
        )
    try:
        saliency = RembgSaliency(model)
        shape = saliency.input_shape()
    except Exception as exc:  # onnxruntime raises its own exception types
        return Verification(model.name, size, digest, None, family, False, f"cannot open: {exc}")
    want = model.family.size
    static = [d for d in shape if isinstance(d, int)]
    if len(shape) != 4 or (len(static) == 4 and static[1:] != [3, want, want]):
        return Verification(
            model.name, size, digest, shape, family, False, f"expected input 1x3x{want}x{want}"
        )
    if run:
        probe = np.zeros((48, 64, 3), np.uint8)
        probe[12:36, 16:48] = (200, 60, 40)
        try:
            mask = saliency.coarse(probe)
        except Exception as exc:
            return Verification(model.name, size, digest, shape, family, False, f"run: {exc}")
        if mask.shape != (48, 64) or not np.isfinite(mask).all():
            return Verification(model.name, size, digest, shape, family, False, "bad output")
    return Verification(model.name, size, digest, shape, family, True, None)
