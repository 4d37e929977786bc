"""Filling opaque overlay strokes: OpenCV Telea, then corrected by **pixelmill-inpaint**.

Telea's fast-marching fill propagates the colours around a hole inwards: on thin strokes over
smooth areas it is close to right, but across texture (wood grain, foliage, brick) and wide
strokes it leaves a smooth smear. pixelmill-inpaint (``models/pixelmill-inpaint.onnx``, our own
gated-convolution network, ``training/inpaint/``, ``MODEL_CARD.md``) takes Telea's fill and the
mask and corrects the pixels inside the mask from what it learned of photos; pixels outside the
mask are never changed.

The network runs only around the mask: the mask grown by ``CONTEXT`` pixels falls into
connected components, and each component's box (tiled with a ``HALO`` above ``TILE`` pixels a
side) is one run.
"""

from __future__ import annotations

import json
from functools import cached_property
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.runtime.onnx import OnnxModel

MODEL_FILE = "pixelmill-inpaint.onnx"
MULTIPLE = 4
"""The network's input height and width must be multiples of this (two 2x downsamplings)."""
CONTEXT = 48
"""Pixels of photo around the mask that each run sees."""
TILE = 384
HALO = 64

U8 = npt.NDArray[np.uint8]
Mask = npt.NDArray[np.bool_]


def model_file() -> Traversable:
    """The packaged ONNX file of the network."""
    return files("pixelmill.engines.text_removal") / "models" / MODEL_FILE


def telea(rgb: U8, mask: Mask, radius: int) -> U8:
    """OpenCV's Telea fill of ``mask`` (the network's first fill)."""
    return np.asarray(
        cv2.inpaint(rgb, mask.astype(np.uint8) * 255, radius, cv2.INPAINT_TELEA), np.uint8
    )


class Inpainter:
    """One inpainting network file (the packaged one: :data:`INPAINTER`; training scores
    candidates through the same code)."""

    def __init__(self, model: OnnxModel) -> None:
        self.model = model

    def load(self) -> None:
        """Create the ONNX session now (idempotent, thread-safe)."""
        self.model.load()

    @cached_property
    def info(self) -> dict[str, Any]:
        """Facts about the network, for ``details``."""
        meta = self.model.session.get_modelmeta().custom_metadata_map
        return {
            "name": meta.get("pixelmill_name", "pixelmill-inpaint"),
            "file": self.model.name,
            "params": int(meta["pixelmill_params"]),
            "macs_per_pixel": int(meta["pixelmill_macs_per_pixel"]),
            "config": json.loads(meta.get("pixelmill_config", "{}")),
        }

    def fill(self, rgb: U8, mask: Mask, radius: int) -> U8:
        """``rgb`` (H, W, 3 uint8) with the pixels of ``mask`` filled: Telea, then the
        network's correction inside the mask (see the module docstring). Pixels outside
        ``mask`` are returned as they are."""
        first = telea(rgb, mask, radius)
        out = first.copy()
        size = 2 * CONTEXT + 1
        grown = cv2.dilate(mask.astype(np.uint8), np.ones((size, size), np.uint8))
        n, labels, stats, _ = cv2.connectedComponentsWithStats(grown, connectivity=8)
        for i in range(1, n):
            x, y, w, h = (int(v) for v in stats[i, :4])
            box = np.s_[y : y + h, x : x + w]
            own = mask[box] & (labels[box] == i)
            if own.any():
                self._refine(first[box], own, out[box])
        return out

    def _run(self, first: U8, mask: Mask) -> U8:
        """The network on one crop (padded to a multiple of ``MULTIPLE``)."""
        h, w = mask.shape
        ph, pw = (-h) % MULTIPLE, (-w) % MULTIPLE
        reflect = min(h, w) > max(ph, pw)
        f = np.pad(first, ((0, ph), (0, pw), (0, 0)), mode="reflect" if reflect else "edge")
        m = np.pad(mask, ((0, ph), (0, pw)), mode="reflect" if reflect else "edge")
        x = np.empty((1, 4, h + ph, w + pw), np.float32)
        x[0, :3] = f.transpose(2, 0, 1)
        x[0, :3] *= np.float32(1.0 / 255.0)
        x[0, 3] = m
        y = self.model.run_single(x)[0][0, :, :h, :w]
        return np.clip(np.rint(y.transpose(1, 2, 0) * 255.0), 0, 255).astype(np.uint8)

    def _refine(self, first: U8, mask: Mask, out: U8) -> None:
        """Refine ``out`` (a view, like ``first`` and ``mask``, of one component's box) inside
        ``mask``, in tiles with a halo if the box is big."""
        h, w = mask.shape
        for ty in range(0, h, TILE):
            for tx in range(0, w, TILE):
                ty1, tx1 = min(h, ty + TILE), min(w, tx + TILE)
                inner = mask[ty:ty1, tx:tx1]
                if not inner.any():
                    continue
                sy0, sx0 = max(0, ty - HALO), max(0, tx - HALO)
                sy1, sx1 = min(h, ty1 + HALO), min(w, tx1 + HALO)
                res = self._run(
                    np.ascontiguousarray(first[sy0:sy1, sx0:sx1]),
                    np.ascontiguousarray(mask[sy0:sy1, sx0:sx1]),
                )
                part = res[ty - sy0 : ty1 - sy0, tx - sx0 : tx1 - sx0]
                view = out[ty:ty1, tx:tx1]
                view[inner] = part[inner]


INPAINTER = Inpainter(OnnxModel(model_file()))
"""The packaged pixelmill-inpaint network (its session is created on first use)."""
