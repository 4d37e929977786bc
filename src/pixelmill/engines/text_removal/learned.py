"""pixelmill-overlay: learned overlay (text, watermark, logo) removal, run with onnxruntime.

A compact U-Net (two since 2026-11-25, their outputs averaged in one ONNX graph; trained by
``training/overlay/``, described in ``models/MODEL_CARD.md``) predicts for every pixel the
overlay's *coverage* ``k`` (where the overlay is, 0..1, whatever its opacity), besides its own
per-pixel opacity / colour / fill guesses. The opacity ``a`` and colour ``c`` are then *fitted*
(``unmix.py``): an overlay is one flat colour at one opacity laid through an anti-aliased glyph
coverage, so ``observed - b = k a (c - b)`` (``b``: the photo around the strokes) is solved by
robust least squares for the whole image (regions it would make worse are kept). If the
coverage repeats on a 2-D lattice (a tiled watermark, ``lattice.py``), it is first replaced by
the coverage pooled over the lattice's translates (``unmix.periodic_coverage``): copies the
network missed are recovered from those it found, detections that do not repeat fade. Then, per
pixel:

- outside the coverage's hysteresis support (``SETTINGS.low`` / ``SETTINGS.high``), or in a
  region the fit would make worse, or when the fit is no overlay's (explaining under
  ``SETTINGS.min_explained``, opacity above ``SETTINGS.max_opacity`` unless the opacity
  head's opacity explains it, ``SETTINGS.head_explained``; without a lattice, a
  support over ``SETTINGS.max_cover`` of the image or not ``SETTINGS.min_confident``): kept
  exactly as it is (photos without overlays come back unchanged);
- ``a k < SETTINGS.fill_at`` (semi-transparent watermarks, anti-aliased edges): **unmixed**,
  ``clean = (observed - a k c) / (1 - a k)`` - nothing is invented, the photo under the
  watermark is recovered from the observed pixel itself;
- ``a k >= SETTINGS.fill_at`` (opaque strokes): nothing of the photo survives, so the pixel is
  **filled**: OpenCV's Telea inpainting corrected by our gated-convolution inpainter
  (``fill="gated"``, default, ``inpaint.py``), Telea alone (``fill="telea"``) or the network's
  fill head (``fill="learned"``). Around strokes the opacity head is sure of, the 1-px ring of
  their anti-aliased edge that no fit changed is filled with them (``SETTINGS.halo``); where
  the image's fit finds an opaque overlay that explains the coverage, covered letters grouped
  with those strokes are filled too (``SETTINGS.sibling_explained``). A filled region that the
  opacity head and a fit against its own fill both see as semi-transparent is unmixed instead
  (``SETTINGS.semi_opacity``): its photo still shows through, and a fill can come out further
  from it than the mark.

Inference runs on the whole image up to ``WHOLE_MAX_PIXELS``, and in overlapping tiles above
(each tile sees ``HALO`` pixels of context on every side), so memory stays bounded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from pixelmill.engines.runtime.onnx import OnnxModel
from pixelmill.engines.text_removal import unmix
from pixelmill.engines.text_removal.inpaint import INPAINTER

MODEL_FILE = "pixelmill-overlay.onnx"
SETTINGS = unmix.Settings()
"""Coverage thresholds, fit gates and fill threshold (chosen on the held-out pairs: see
``MODEL_CARD.md``)."""
COVERAGE_CHANNEL = 7
"""Channel of the coverage in an 8-output network; a 7-output network's opacity channel (0)
serves as its coverage (the fit rescales it)."""
MULTIPLE = 8
"""The network's input height and width must be multiples of this (three 2x downsamplings)."""
WHOLE_MAX_PIXELS = 1_500_000
TILE = 768
HALO = 64

Fill = Literal["learned", "telea", "gated"]
Float = npt.NDArray[np.float32]


def model_file() -> Traversable:
    """The packaged ONNX file of the network."""
    return files("pixelmill.engines.text_removal") / "models" / MODEL_FILE


@dataclass(frozen=True)
class Removal:
    image: npt.NDArray[np.uint8]  # RGB uint8
    coverage: Float  # predicted overlay coverage (H, W)
    head_opacity: Float  # the network's own per-pixel opacity guess (H, W)
    opacity: Float  # fitted opacity x coverage where the image was changed, else 0 (H, W)
    unmixed_fraction: float  # share of pixels unmixed
    filled_fraction: float  # share of pixels filled
    fit: dict[str, Any]  # the whole image's fit and how many regions were kept
    filled: npt.NDArray[np.bool_]  # the pixels filled (H, W)


class OverlayNetwork:
    """The packaged network (``model_file()``), held by its engine; its session is created on
    :meth:`load` (idempotent, thread-safe) or the first run."""

    def __init__(self) -> None:
        self.model = OnnxModel(model_file())

    def load(self) -> None:
        self.model.load()

    @cached_property
    def _meta(self) -> dict[str, str]:
        meta = self.model.session.get_modelmeta().custom_metadata_map
        return {str(k): str(v) for k, v in meta.items()}

    @cached_property
    def outputs(self) -> int:
        """Number of output channels (8: opacity, colour, fill, coverage)."""
        return int(json.loads(self._meta["pixelmill_config"]).get("outputs", 7))

    def info(self) -> dict[str, Any]:
        """Facts about the network, for ``details``."""
        meta = self._meta
        return {
            "name": meta.get("pixelmill_name", "pixelmill-overlay"),
            "file": MODEL_FILE,
            "params": int(meta["pixelmill_params"]),
            "macs_per_pixel": int(meta["pixelmill_macs_per_pixel"]),
            "outputs": self.outputs,
        }

    def run_padded(self, rgb: npt.NDArray[np.uint8]) -> Float:
        """Network output ``(H, W, C)`` for one image or tile (reflect-padded to a multiple of
        8)."""
        h, w = rgb.shape[:2]
        ph, pw = (-h) % MULTIPLE, (-w) % MULTIPLE
        pad = ((0, ph), (0, pw), (0, 0))
        edge = min(h, w) <= max(ph, pw)
        x = np.pad(rgb, pad, "edge") if edge else np.pad(rgb, pad, mode="reflect")
        xf = x.astype(np.float32).transpose(2, 0, 1)[None] * np.float32(1.0 / 255.0)
        y = self.model.run_single(np.ascontiguousarray(xf))[0]
        return np.ascontiguousarray(y[0, :, :h, :w].transpose(1, 2, 0), dtype=np.float32)

    def predict(self, rgb: npt.NDArray[np.uint8]) -> Float:
        """Per-pixel ``(H, W, 8)``, all in 0..1: opacity, overlay colour (3), fill colour (3)
        (the network's own per-pixel guesses) and coverage."""
        h, w = rgb.shape[:2]
        if h * w <= WHOLE_MAX_PIXELS:
            return self.run_padded(rgb)
        out = np.empty((h, w, self.outputs), np.float32)
        for y0 in range(0, h, TILE):
            y1 = min(h, y0 + TILE)
            for x0 in range(0, w, TILE):
                x1 = min(w, x0 + TILE)
                sy0, sx0 = max(0, y0 - HALO), max(0, x0 - HALO)
                sy1, sx1 = min(h, y1 + HALO), min(w, x1 + HALO)
                part = self.run_padded(np.ascontiguousarray(rgb[sy0:sy1, sx0:sx1]))
                out[y0:y1, x0:x1] = part[y0 - sy0 : y1 - sy0, x0 - sx0 : x1 - sx0]
        return out

    def remove(
        self,
        rgb: npt.NDArray[np.uint8],
        fill: Fill = "gated",
        extra_mask: npt.NDArray[np.bool_] | None = None,
    ) -> Removal:
        """Remove overlays from an RGB uint8 image (see the module docstring). ``extra_mask``
        (e.g. OCR strokes) marks more pixels to fill."""
        if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
            raise ValueError(f"expected an (H, W, 3) uint8 image, got {rgb.dtype} {rgb.shape}")
        out = self.predict(rgb)
        k = np.ascontiguousarray(
            out[..., COVERAGE_CHANNEL if out.shape[2] > COVERAGE_CHANNEL else 0]
        )
        done = unmix.restore(
            np.ascontiguousarray(rgb),
            k,
            np.ascontiguousarray(out[..., 0]),
            SETTINGS,
            extra_fill=extra_mask,
            fill_rgb=out[..., 4:7] if fill == "learned" else None,
            inpaint=INPAINTER.fill if fill == "gated" else None,
        )
        fit: dict[str, Any] = {
            "regions": done.regions,
            "kept": done.kept,
        }
        if done.lattice is not None:  # a tiled watermark: coverage pooled over its lattice
            fit["lattice"] = [
                [round(v, 1) for v in done.lattice.v1],
                [round(v, 1) for v in done.lattice.v2],
            ]
        if done.notes:
            fit["notes"] = list(done.notes)
        if done.image_fit is not None:
            a, c, e = done.image_fit
            fit.update(
                opacity=round(a, 3), colour=[round(v * 255) for v in c], explained=round(e, 3)
            )
        return Removal(
            done.image,
            k,
            np.ascontiguousarray(out[..., 0]),
            done.opacity,
            float(done.unmixed.mean()),
            float(done.filled.mean()),
            fit,
            done.filled,
        )
