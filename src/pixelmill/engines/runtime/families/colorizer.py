"""DDColor exported to ONNX by FaceFusion (the ``ddcolor`` family), fed and read as FaceFusion's
frame colorizer does (``facefusion/processors/modules/frame_colorizer/core.py``,
``prepare_temp_frame`` and ``merge_color_frame``):

- in: the image's CIELAB lightness alone (a and b set to 0) turned back into RGB, on the float
  0..1 scale OpenCV's Lab conversion takes, resized to the model's side (256 by default), NCHW,
  as ``input``;
- out: two channels, Lab a and b, at that side; resized to the image's size and joined to the
  image's own full-resolution lightness, then converted to RGB and rounded to 8 bits.

The lightness of the result is the input's, exactly as the offline colouriser keeps it; only
chroma comes from the network, which sees a small picture (it is a global model: no tiling).
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.onnx import OnnxModel

SIDE = 256


class Colorizer:
    """A DDColor ONNX file: :meth:`colorize` gives an RGB image plausible colour."""

    def __init__(self, path: Path, name: str):
        self.name = name
        self.model = OnnxModel(path)
        self.side = SIDE

    def load(self) -> None:
        """Open the session and read its side (a fixed input size, if it has one)."""
        self.model.load()
        shape = self.model.session.get_inputs()[0].shape
        if len(shape) != 4 or shape[1] != 3:
            raise ValueError(f"{self.name}: expected an input of 1x3xHxW, got {shape}")
        if isinstance(shape[2], int):
            self.side = int(shape[2])

    def chroma(self, rgb: ImageArray) -> np.ndarray:
        """The network's Lab a, b (float32 H×W×2) for ``rgb``."""
        h, w = rgb.shape[:2]
        unit = rgb.astype(np.float32) / 255.0
        lightness = cv2.cvtColor(unit, cv2.COLOR_RGB2LAB)[..., :1]
        grey = np.concatenate([lightness, np.zeros_like(lightness), np.zeros_like(lightness)], -1)
        grey_rgb = cv2.cvtColor(grey, cv2.COLOR_LAB2RGB)
        x = cv2.resize(grey_rgb, (self.side, self.side)).transpose(2, 0, 1)[np.newaxis]
        ab = self.model.run_single(np.ascontiguousarray(x, dtype=np.float32))[0][0]
        return np.asarray(cv2.resize(ab.transpose(1, 2, 0), (w, h)), dtype=np.float32)

    def colorize(self, rgb: ImageArray) -> ImageArray:
        """``rgb`` (``uint8`` H×W×3) with its lightness kept and the network's chroma."""
        unit = rgb.astype(np.float32) / 255.0
        lightness = cv2.cvtColor(unit, cv2.COLOR_RGB2LAB)[..., :1]
        lab = np.concatenate([lightness, self.chroma(rgb)], -1)
        out = cv2.cvtColor(lab, cv2.COLOR_LAB2RGB) * 255.0
        return np.asarray(np.clip(np.round(out), 0, 255), dtype=np.uint8)
