"""LaMa exported to ONNX by Carve (the ``lama`` family, ``lama_fp32.onnx``): two inputs,
``image`` (RGB scaled to 0..1, NCHW, 512 × 512) and ``mask`` (1 where the hole is, 0 elsewhere,
1 × 1 × 512 × 512); one output, the filled image as RGB 0..255 (the export multiplies LaMa's
``inpainted`` by 255, as advimman/lama's own ``bin/predict.py`` does before writing it).

The model's input is fixed at 512², so :meth:`Inpainter.fill` works window by window: the holes
are grouped (each dilated by a margin, so strokes of one caption share a window), and each group
gets a 512² window of the image around it at its own resolution, with the context the network
needs; a group bigger than that is cropped with a margin, shrunk to 512², filled and enlarged
back (LaMa sees the whole hole at once, which matters more than resolution for large holes).
Only the hole's pixels change; everything else stays byte for byte as it came.

Text, watermark and object removal call it through :func:`.presence.best_runner`.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.onnx import OnnxModel

SIDE = 512
GROUP_MARGIN = 24
"""Holes closer than about twice this many pixels share a window."""
CONTEXT = 64
"""At least this much image around a group that has to be shrunk to fit the window."""

Mask = npt.NDArray[np.bool_]


class Inpainter:
    """A LaMa ONNX file: :meth:`fill` paints over the masked pixels of an RGB image."""

    def __init__(self, path: Path, name: str):
        self.name = name
        self.model = OnnxModel(path)

    def load(self) -> None:
        """Open the session and check its inputs are LaMa's."""
        self.model.load()
        inputs = {i.name: list(i.shape) for i in self.model.session.get_inputs()}
        if set(inputs) != {"image", "mask"}:
            raise ValueError(f"{self.name}: expected inputs image and mask, got {sorted(inputs)}")
        for name, channels in (("image", 3), ("mask", 1)):
            shape = inputs[name]
            if len(shape) != 4 or shape[1] != channels or shape[2:] != [SIDE, SIDE]:
                raise ValueError(f"{self.name}: {name} should be Nx{channels}x512x512: {shape}")

    def _run(self, rgb: ImageArray, hole: Mask) -> ImageArray:
        image = rgb.astype(np.float32).transpose(2, 0, 1)[np.newaxis] / 255.0
        mask = hole.astype(np.float32)[np.newaxis, np.newaxis]
        feeds = {
            "image": np.ascontiguousarray(image, dtype=np.float32),
            "mask": np.ascontiguousarray(mask, dtype=np.float32),
        }
        out = self.model.run(feeds)[0][0].transpose(1, 2, 0)
        return np.asarray(np.clip(np.round(out), 0, 255), dtype=np.uint8)

    def fill(self, rgb: ImageArray, hole: npt.NDArray[np.generic]) -> ImageArray:
        """``rgb`` (``uint8`` H×W×3) with the pixels where ``hole`` is non-zero filled in."""
        mask = np.asarray(hole) > 0
        out = np.array(rgb[..., :3], dtype=np.uint8, copy=True)
        if not mask.any():
            return out
        h, w = mask.shape
        if h < SIDE or w < SIDE:
            py, px = max(SIDE - h, 0), max(SIDE - w, 0)
            widths = ((0, py), (0, px), (0, 0))
            if py < h and px < w:
                padded = np.pad(out, widths, mode="reflect")
            else:
                padded = np.pad(out, widths, mode="edge")
            filled = self.fill(padded, np.pad(mask, ((0, py), (0, px))))
            out[mask] = filled[:h, :w][mask]
            return out
        grown = cv2.dilate(mask.astype(np.uint8), np.ones((2 * GROUP_MARGIN + 1,) * 2, np.uint8))
        count, labels, boxes, _ = cv2.connectedComponentsWithStats(grown, connectivity=8)
        for index in range(1, count):
            x, y, bw, bh, _area = (int(v) for v in boxes[index])
            self._fill_group(out, mask, mask & (labels == index), x, y, bw, bh)
        return out

    def _fill_group(
        self, out: ImageArray, mask: Mask, group: Mask, x: int, y: int, bw: int, bh: int
    ) -> None:
        """Fill ``group``'s pixels. The network is shown every hole in its window (so it never
        takes an unfilled hole for context), but only this group's pixels are kept: a hole two
        windows share is filled once."""
        h, w = mask.shape
        if bw <= SIDE and bh <= SIDE:
            x0 = min(max(x + bw // 2 - SIDE // 2, 0), w - SIDE)
            y0 = min(max(y + bh // 2 - SIDE // 2, 0), h - SIDE)
            window = (slice(y0, y0 + SIDE), slice(x0, x0 + SIDE))
            result = self._run(out[window], mask[window])
            keep = group[window]
            out[window][keep] = result[keep]
            return
        side = min(max(bw, bh) + 2 * CONTEXT, max(h, w))
        x0 = min(max(x + bw // 2 - side // 2, 0), max(w - side, 0))
        y0 = min(max(y + bh // 2 - side // 2, 0), max(h - side, 0))
        window = (slice(y0, min(y0 + side, h)), slice(x0, min(x0 + side, w)))
        crop, hole = out[window], mask[window]
        ch, cw = hole.shape
        small = cv2.resize(crop, (SIDE, SIDE), interpolation=cv2.INTER_AREA)
        shrunk = cv2.resize(hole.astype(np.uint8), (SIDE, SIDE), interpolation=cv2.INTER_AREA)
        # Grown by two pixels of the small picture, so the enlarged fill that lands on the
        # hole's edge is made only of filled pixels (bilinear reaches one pixel out).
        small_hole = np.asarray(cv2.dilate(shrunk, np.ones((5, 5), np.uint8)) > 0)
        filled = self._run(np.asarray(small, np.uint8), small_hole)
        enlarged = cv2.resize(filled, (cw, ch), interpolation=cv2.INTER_LINEAR)
        keep = group[window]
        out[window][keep] = enlarged[keep]
