"""Real-ESRGAN exported to ONNX (the ``real-esrgan`` family), run as FaceFusion's frame enhancer
runs it (``facefusion/processors/modules/frame_enhancer/core.py``, ``prepare_tile_frame`` and
``normalize_tile_frame``): one input named ``input``, RGB scaled to 0..1, NCHW; the output is
RGB 0..1 at ``scale`` × the tile, clipped and rounded to 8 bits. Large images go through in
256-pixel windows with 16 pixels of context on every side (:mod:`..tiling`), so memory does not
grow with the image; a model with a fixed input size gets windows of exactly that size."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.onnx import OnnxModel
from pixelmill.engines.runtime.tiling import Array, run_tiled

WINDOW = 256
OVERLAP = 16


class Upscaler:
    """A Real-ESRGAN ONNX file: :meth:`upscale` multiplies an RGB image's size by :attr:`scale`."""

    def __init__(self, path: Path, name: str):
        self.name = name
        self.model = OnnxModel(path)
        self.window = WINDOW
        self.fixed = False
        self.scale = 0

    def load(self) -> None:
        """Open the session, read its window (a fixed input size, if any) and find its scale
        by running it once on a blank window."""
        self.model.load()
        shape = self.model.session.get_inputs()[0].shape
        if len(shape) != 4 or shape[1] not in (3, "3"):
            raise ValueError(f"{self.name}: expected an input of 1x3xHxW, got {shape}")
        h, w = shape[2], shape[3]
        if isinstance(h, int) and isinstance(w, int):
            if h != w:
                raise ValueError(f"{self.name}: a fixed input must be square, got {h}x{w}")
            self.window, self.fixed = h, True
        side = self.window if self.fixed else 2 * OVERLAP + 8
        probe = self.model.run_single(np.zeros((1, 3, side, side), np.float32))[0]
        self.scale = int(probe.shape[-1]) // side
        if self.scale < 1 or probe.shape[-2:] != (side * self.scale, side * self.scale):
            raise ValueError(f"{self.name}: output {probe.shape} is not a whole multiple")

    def _tile(self, tile: Array) -> Array:
        x = tile.astype(np.float32).transpose(2, 0, 1)[np.newaxis] / 255.0
        y = self.model.run_single(np.ascontiguousarray(x, dtype=np.float32))[0][0]
        out = np.clip(y.transpose(1, 2, 0) * 255.0, 0.0, 255.0)
        return np.asarray(np.round(out), dtype=np.uint8)

    def upscale(self, rgb: ImageArray) -> ImageArray:
        """``rgb`` (``uint8`` H×W×3) at ``scale`` × its size."""
        out = run_tiled(
            rgb, self._tile, window=self.window, overlap=OVERLAP, scale=self.scale, fixed=self.fixed
        )
        return np.ascontiguousarray(out, dtype=np.uint8)
