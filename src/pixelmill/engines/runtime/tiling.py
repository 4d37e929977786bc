"""Run an image model tile by tile, so memory stays bounded on large inputs.

A model sees windows of at most ``window`` pixels a side. Each window is a tile's *core* plus
``overlap`` pixels of the neighbouring image on every side (context the network needs at its
borders); only the core of each result is kept, so neighbouring cores meet without a seam from
missing context (Real-ESRGAN's ``tile_pad``, FaceFusion's ``create_tile_frames``). A model of
fixed input size gets exactly ``window`` × ``window`` every time: windows at the image's edge are
shifted inward instead of cut, and an image smaller than the window is padded by reflection.

Peak memory is one window's activations plus the output image, whatever the input's size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]
TileFunction = Callable[[Array], Array]
"""``(h, w, c) -> (h * scale, w * scale, c_out)``."""


def spans(length: int, window: int, overlap: int, fixed: bool) -> Iterator[tuple[int, int, int]]:
    """``(core_start, core_end, window_start)`` along one axis of ``length`` pixels."""
    core = window - 2 * overlap
    if core <= 0:
        raise ValueError(f"window {window} leaves no core with overlap {overlap}")
    for start in range(0, length, core):
        end = min(start + core, length)
        if fixed:
            lo = min(max(start - overlap, 0), max(length - window, 0))
        else:
            lo = max(start - overlap, 0)
        yield start, end, lo


def run_tiled(
    image: Array,
    run: TileFunction,
    *,
    window: int,
    overlap: int,
    scale: int = 1,
    fixed: bool = False,
) -> Array:
    """``run`` over ``image`` (``(H, W, C)``) in windows, the cores stitched into one
    ``(H * scale, W * scale, C_out)`` result of ``run``'s dtype. ``fixed``: every window is
    exactly ``window`` × ``window`` (a model with a fixed input size)."""
    h, w = image.shape[:2]
    if fixed and (h < window or w < window):
        pad_y, pad_x = max(window - h, 0), max(window - w, 0)
        widths = [(0, pad_y), (0, pad_x)] + [(0, 0)] * (image.ndim - 2)
        if pad_y < h and pad_x < w:
            padded = np.pad(image, widths, mode="reflect")
        else:
            padded = np.pad(image, widths, mode="edge")
        whole = run_tiled(padded, run, window=window, overlap=overlap, scale=scale, fixed=True)
        return whole[: h * scale, : w * scale]
    out: Array | None = None
    for y0, y1, wy in spans(h, window, overlap, fixed):
        wy1 = wy + window if fixed else min(y1 + overlap, h)
        for x0, x1, wx in spans(w, window, overlap, fixed):
            wx1 = wx + window if fixed else min(x1 + overlap, w)
            tile = np.ascontiguousarray(image[wy:wy1, wx:wx1])
            result = run(tile)
            if result.shape[:2] != (tile.shape[0] * scale, tile.shape[1] * scale):
                raise ValueError(
                    f"the model gave {result.shape[:2]} for a {tile.shape[:2]} tile at ×{scale}"
                )
            if out is None:
                out = np.empty((h * scale, w * scale, *result.shape[2:]), dtype=result.dtype)
            out[y0 * scale : y1 * scale, x0 * scale : x1 * scale] = result[
                (y0 - wy) * scale : (y1 - wy) * scale, (x0 - wx) * scale : (x1 - wx) * scale
            ]
    assert out is not None  # an image has at least one pixel
    return out
