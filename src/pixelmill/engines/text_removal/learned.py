"""pixelmill-overlay: learned overlay (text, watermark, logo) removal, run with onnxruntime.

A compact U-Net (trained by ``training/overlay/``, described in ``models/MODEL_CARD.md``)
predicts for every pixel the overlay's opacity ``a`` and colour ``c``, and a *fill* colour (its
guess of the photo under an opaque stroke). The photo is then recovered pixel by pixel:

- ``a < KEEP_BELOW``, or a faint region that nowhere reaches ``SUPPORT``: the pixel is kept as
  it is (photos without overlays come back unchanged);
- ``KEEP_BELOW <= a < FILL_AT`` (semi-transparent watermarks, anti-aliased edges):
  **unmixed**, ``clean = (observed - a * c) / (1 - a)``, clamped to 0..255 - nothing is
  invented, the photo under the watermark is recovered from the observed pixel itself;
- ``a >= FILL_AT`` (opaque strokes): nothing of the photo survives, so the pixel is
  **filled**, by default by OpenCV's Telea inpainting over those pixels (``fill="telea"``: it
  measured better than the network's own fill head on the held-out pairs), or from the fill
  head (``fill="learned"``).

Inference runs on the whole image up to ``WHOLE_MAX_PIXELS``, and in overlapping tiles above
(each tile sees ``HALO`` pixels of context on every side), so memory stays bounded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.runtime.onnx import OnnxModel

MODEL_FILE = "pixelmill-overlay.onnx"
KEEP_BELOW = 0.1
"""Predicted opacity below which a pixel is left exactly as it is."""
SUPPORT = 0.3
"""A pixel at or above ``KEEP_BELOW`` is changed only if its connected region (8-connected,
opacity >= ``KEEP_BELOW``) reaches this opacity somewhere (hysteresis, as in Canny's edge
linking): faint scattered responses on photo content are dropped, faint edges of a real overlay
are kept."""
MULTIPLE = 8
"""The network's input height and width must be multiples of this (three 2x downsamplings)."""
WHOLE_MAX_PIXELS = 1_500_000
TILE = 768
HALO = 64
TELEA_RADIUS = 3
FILL_AT = 0.5
"""Predicted opacity from which a pixel is filled rather than unmixed. The network was trained
with 0.8 (``threshold()``), but it under-estimates the opacity inside thick opaque letters, and
unmixing those with an uncertain colour leaves garish colour blotches; filling from 0.5 measured
better on captions and logos (held-out pairs: caption 30.86 -> 32.16 dB, logo 36.48 -> 36.91)
and a little worse on watermarks (28.73 -> 28.39, input 28.26) and photos without overlays
(46.5 -> 44.3)."""

Fill = Literal["learned", "telea"]
Float = npt.NDArray[np.float32]


def model_file() -> Traversable:
    """The packaged ONNX file of the network."""
    return files("pixelmill.engines.text_removal") / "models" / MODEL_FILE


_MODEL = OnnxModel(model_file())


def load() -> None:
    """Create the ONNX session now (idempotent, thread-safe)."""
    _MODEL.load()


@cache
def _meta() -> dict[str, str]:
    meta = _MODEL.session.get_modelmeta().custom_metadata_map
    return {str(k): str(v) for k, v in meta.items()}


@cache
def threshold() -> float:
    """Opacity at or above which a pixel is filled rather than unmixed (from the model)."""
    return float(json.loads(_meta()["pixelmill_config"])["threshold"])


def model_info() -> dict[str, Any]:
    """Facts about the network, for ``details``."""
    meta = _meta()
    return {
        "name": meta.get("pixelmill_name", "pixelmill-overlay"),
        "file": MODEL_FILE,
        "params": int(meta["pixelmill_params"]),
        "macs_per_pixel": int(meta["pixelmill_macs_per_pixel"]),
        "threshold": threshold(),
    }


def _run_padded(rgb: npt.NDArray[np.uint8]) -> Float:
    """Network output ``(H, W, 7)`` for one image or tile (reflect-padded to a multiple of 8)."""
    h, w = rgb.shape[:2]
    ph, pw = (-h) % MULTIPLE, (-w) % MULTIPLE
    pad = ((0, ph), (0, pw), (0, 0))
    x = np.pad(rgb, pad, mode="reflect") if min(h, w) > max(ph, pw) else np.pad(rgb, pad, "edge")
    xf = x.astype(np.float32).transpose(2, 0, 1)[None] * np.float32(1.0 / 255.0)
    y = _MODEL.run_single(np.ascontiguousarray(xf))[0]
    return np.ascontiguousarray(y[0, :, :h, :w].transpose(1, 2, 0), dtype=np.float32)


def predict(rgb: npt.NDArray[np.uint8]) -> Float:
    """Per-pixel ``(H, W, 7)``: opacity, overlay colour (3), fill colour (3), all in 0..1."""
    h, w = rgb.shape[:2]
    if h * w <= WHOLE_MAX_PIXELS:
        return _run_padded(rgb)
    out = np.empty((h, w, 7), np.float32)
    for y0 in range(0, h, TILE):
        y1 = min(h, y0 + TILE)
        for x0 in range(0, w, TILE):
            x1 = min(w, x0 + TILE)
            sy0, sx0 = max(0, y0 - HALO), max(0, x0 - HALO)
            sy1, sx1 = min(h, y1 + HALO), min(w, x1 + HALO)
            part = _run_padded(np.ascontiguousarray(rgb[sy0:sy1, sx0:sx1]))
            out[y0:y1, x0:x1] = part[y0 - sy0 : y1 - sy0, x0 - sx0 : x1 - sx0]
    return out


@dataclass(frozen=True)
class Removal:
    image: npt.NDArray[np.uint8]  # RGB uint8
    alpha: Float  # predicted overlay opacity (H, W)
    unmixed_fraction: float  # share of pixels unmixed
    filled_fraction: float  # share of pixels filled


def supported(
    alpha: Float, low: float | None = None, high: float | None = None
) -> npt.NDArray[np.bool_]:
    """Pixels with ``alpha >= low`` whose connected region reaches ``alpha >= high``."""
    low = KEEP_BELOW if low is None else low
    high = SUPPORT if high is None else high
    n, labels = cv2.connectedComponents((alpha >= low).astype(np.uint8), connectivity=8)
    strong = np.zeros(n, bool)
    strong[np.unique(labels[alpha >= high])] = True
    strong[0] = False
    return np.asarray(strong[labels], dtype=np.bool_)


def remove_overlay(
    rgb: npt.NDArray[np.uint8],
    fill: Fill = "telea",
    extra_mask: npt.NDArray[np.bool_] | None = None,
) -> Removal:
    """Remove overlays from an RGB uint8 image (see the module docstring). ``extra_mask``
    (e.g. OCR strokes) marks more pixels to fill."""
    if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
        raise ValueError(f"expected an (H, W, 3) uint8 image, got {rgb.dtype} {rgb.shape}")
    out = predict(rgb)
    a = out[..., 0]
    thr = threshold()
    changed = supported(a)
    opaque = changed & (a >= FILL_AT)
    if extra_mask is not None:
        opaque |= extra_mask
    keep = ~changed & ~opaque
    semi = ~keep & ~opaque
    obs = rgb.astype(np.float32) * np.float32(1.0 / 255.0)
    ac = np.clip(a, 0.0, thr)[..., None]
    unmixed = (obs - ac * out[..., 1:4]) / (1.0 - ac)
    result = np.where(keep[..., None], obs, unmixed)
    if fill == "learned":
        result = np.where(opaque[..., None], out[..., 4:7], result)
    restored = np.clip(np.rint(result * 255.0), 0, 255).astype(np.uint8)
    if fill == "telea" and opaque.any():
        restored = np.asarray(
            cv2.inpaint(restored, opaque.astype(np.uint8) * 255, TELEA_RADIUS, cv2.INPAINT_TELEA),
            dtype=np.uint8,
        )
    return Removal(
        np.ascontiguousarray(restored),
        a,
        float(semi.mean()),
        float(opaque.mean()),
    )
