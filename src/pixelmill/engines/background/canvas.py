"""Laying a cut-out out on its output canvas: crop with a margin, the output size, the
subject's scale and position, a background colour or photo, a shadow, and the matte alone.

The geometry is one affine map, ``canvas = offset + k · source``, worked out from the subject's
box (:func:`plan_layout`); only the subject's own rectangle is resampled (premultiplied, so
soft edges keep their colour), and only the subject's and the shadow's rectangles are blended,
with OpenCV's vectorised arithmetic, so the options cost a fraction of the cut-out itself.
Shadows are the runtime's shadow family (``pixelmill.engines.runtime.shadows``): a
transmittance map that either darkens the background or becomes semi-transparent black pixels
of a transparent result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.background.options import CutoutSpec, Margin
from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.layers import Box, bounding_box
from pixelmill.engines.runtime.shadows import shadow_transmittance, transparent_shadow
from pixelmill.engines.runtime.textures import Gray

LEGACY_CROP_MARGIN = 0.02
"""``crop_to_object``'s margin: 2 % of the image's long side, clipped to the image."""


@dataclass(frozen=True)
class Layout:
    """Where the source image lands: ``canvas = (ox, oy) + k · source``."""

    width: int
    height: int
    k: float
    ox: float
    oy: float

    def to_canvas(self, box: Box) -> tuple[float, float, float, float]:
        """A source box ``(x, y, w, h)`` in canvas coordinates."""
        x, y, w, h = box
        return (self.ox + self.k * x, self.oy + self.k * y, self.k * w, self.k * h)


def _margins(box: Box, margin: tuple[Margin, Margin, Margin, Margin]) -> tuple[int, ...]:
    _, _, w, h = box
    sides = (h, w, h, w)  # top and bottom are relative to the height, left and right to the width
    return tuple(
        round(value * side) if relative else round(value)
        for (value, relative), side in zip(margin, sides, strict=True)
    )


def crop_region(image_hw: tuple[int, int], subject: Box | None, spec: CutoutSpec) -> Box:
    """The part of the source that is the canvas before any resizing: the subject plus its
    margin (``crop``; it may reach past the image, which then adds empty space), the old
    ``crop_to_object`` box, or the whole image."""
    h, w = image_hw
    if subject is None or not (spec.crop or spec.legacy_crop):
        return (0, 0, w, h)
    x, y, bw, bh = subject
    if spec.crop:
        top, right, bottom, left = _margins(subject, spec.margin)
        return (x - left, y - top, bw + left + right, bh + top + bottom)
    pad = round(LEGACY_CROP_MARGIN * max(h, w))
    x0, y0 = max(0, x - pad), max(0, y - pad)
    x1, y1 = min(w, x + bw + pad), min(h, y + bh + pad)
    return (x0, y0, x1 - x0, y1 - y0)


def plan_layout(image_hw: tuple[int, int], subject: Box | None, spec: CutoutSpec) -> Layout:
    """The canvas size and the map from source to canvas for ``spec``."""
    rx, ry, rw, rh = crop_region(image_hw, subject, spec)
    if isinstance(spec.size, tuple):
        cw, ch = spec.size
    elif spec.size is not None and rw * rh > spec.size:
        f = math.sqrt(spec.size / (rw * rh))
        cw, ch = max(1, math.floor(rw * f)), max(1, math.floor(rh * f))
    else:
        cw, ch = rw, rh
    box = subject if subject is not None else (rx, ry, rw, rh)
    bx, by, bw, bh = box
    # With a scale the subject's box sets the size; without, the whole (cropped) frame fits.
    k = spec.scale * min(cw / bw, ch / bh) if spec.scale is not None else min(cw / rw, ch / rh)
    if spec.position == "center":
        ox, oy = cw / 2 - k * (bx + bw / 2), ch / 2 - k * (by + bh / 2)
    elif spec.position == "original":
        # The subject's centre keeps its relative place in the (cropped) frame.
        fx, fy = (bx + bw / 2 - rx) / rw, (by + bh / 2 - ry) / rh
        ox, oy = fx * cw - k * (bx + bw / 2), fy * ch - k * (by + bh / 2)
    else:
        px, py = spec.position
        ox, oy = px * (cw - k * bw) - k * bx, py * (ch - k * bh) - k * by
    return Layout(cw, ch, k, ox, oy)


def _three(alpha: ImageArray) -> ImageArray:
    return np.asarray(cv2.merge([alpha, alpha, alpha]), dtype=np.uint8)


def _resample(patch: ImageArray, size: tuple[int, int]) -> ImageArray:
    """Resize a straight-alpha RGBA patch in premultiplied space (area filter when shrinking,
    bicubic when enlarging), in 8 bits with OpenCV's rounding arithmetic; returns straight-alpha
    RGBA uint8. Premultiplying keeps the transparent pixels' colour out of soft edges."""
    a = np.ascontiguousarray(patch[..., 3])
    premult = cv2.multiply(np.ascontiguousarray(patch[..., :3]), _three(a), scale=1.0 / 255.0)
    stack = np.dstack([premult, a])
    shrinking = size[0] * size[1] < patch.shape[0] * patch.shape[1]
    interp = cv2.INTER_AREA if shrinking else cv2.INTER_CUBIC
    out = np.asarray(cv2.resize(stack, size, interpolation=interp), dtype=np.uint8)
    out = out.reshape(size[1], size[0], 4)  # a 1-pixel-wide result loses an axis
    alpha = np.ascontiguousarray(out[..., 3])
    alpha3 = _three(alpha)
    rgb = cv2.min(np.ascontiguousarray(out[..., :3]), alpha3)  # bicubic overshoot
    # x · 255 / a, rounded and saturated; OpenCV gives 0 where a is 0.
    straight = cv2.divide(rgb, alpha3, scale=255.0)
    return np.asarray(cv2.merge([*cv2.split(straight), alpha]), dtype=np.uint8)


def place(rgba: ImageArray, layout: Layout) -> ImageArray:
    """The cut-out on an empty ``layout.width`` × ``layout.height`` canvas (straight-alpha
    RGBA uint8). Only the visible subject is resampled."""
    canvas = np.zeros((layout.height, layout.width, 4), dtype=np.uint8)
    visible = bounding_box(rgba[..., 3] > 0)
    if visible is None:
        return canvas
    vx, vy, vw, vh = visible
    k = layout.k
    # The source rectangle that can reach the canvas, within the visible subject.
    sx0 = max(vx, math.floor(-layout.ox / k))
    sy0 = max(vy, math.floor(-layout.oy / k))
    sx1 = min(vx + vw, math.ceil((layout.width - layout.ox) / k))
    sy1 = min(vy + vh, math.ceil((layout.height - layout.oy) / k))
    if sx0 >= sx1 or sy0 >= sy1:
        return canvas
    dx0, dy0 = round(layout.ox + k * sx0), round(layout.oy + k * sy0)
    dx1, dy1 = round(layout.ox + k * sx1), round(layout.oy + k * sy1)
    if dx1 <= dx0 or dy1 <= dy0:
        return canvas
    patch = rgba[sy0:sy1, sx0:sx1]
    if (dx1 - dx0, dy1 - dy0) != (sx1 - sx0, sy1 - sy0):
        patch = _resample(patch, (dx1 - dx0, dy1 - dy0))
    # Clip to the canvas.
    cx0, cy0 = max(0, dx0), max(0, dy0)
    cx1, cy1 = min(layout.width, dx1), min(layout.height, dy1)
    if cx0 < cx1 and cy0 < cy1:
        canvas[cy0:cy1, cx0:cx1] = patch[cy0 - dy0 : cy1 - dy0, cx0 - dx0 : cx1 - dx0]
    return canvas


# --- backgrounds and the composite -----------------------------------------------------------


def cover(image: ImageArray, width: int, height: int) -> ImageArray:
    """``image`` (RGB) scaled to cover ``width`` × ``height`` and centre-cropped."""
    h, w = image.shape[:2]
    f = max(width / w, height / h)
    size = (max(width, round(w * f)), max(height, round(h * f)))
    interp = cv2.INTER_AREA if f < 1.0 else cv2.INTER_CUBIC
    scaled = np.asarray(cv2.resize(image[..., :3], size, interpolation=interp), dtype=np.uint8)
    x0, y0 = (size[0] - width) // 2, (size[1] - height) // 2
    return np.ascontiguousarray(scaled[y0 : y0 + height, x0 : x0 + width])


def composite(
    placed: ImageArray,
    background: tuple[int, int, int] | ImageArray | None,
    transmittance: Gray | None,
) -> ImageArray:
    """The final pixels: the placed subject over an opaque ``background`` (a colour or an RGB
    image of the canvas's size: RGB out) or over nothing (RGBA out, the shadow as
    semi-transparent black), the background darkened by ``transmittance``.

    Only the subject's and the shadow's rectangles are blended; the rest is the background as
    given, so a corner is exactly ``bg_color``."""
    h, w = placed.shape[:2]
    alpha = placed[..., 3]
    subject = bounding_box(alpha > 0)
    shade = None if transmittance is None else bounding_box(transmittance < 1.0)
    if background is None:
        if shade is None or transmittance is None:
            return placed
        return transparent_shadow(placed, transmittance, shade, subject)
    if isinstance(background, tuple):
        # One row, repeated: a block copy (broadcasting a colour into the canvas is ~40× slower).
        row = np.tile(np.asarray(background, dtype=np.uint8), w).reshape(1, w * 3)
        out = np.repeat(row, h, axis=0).reshape(h, w, 3)
    else:
        out = np.array(background[..., :3], dtype=np.uint8, copy=True)
    if shade is not None and transmittance is not None:
        x, y, sw, sh = shade
        t = transmittance[y : y + sh, x : x + sw, None]
        out[y : y + sh, x : x + sw] = (out[y : y + sh, x : x + sw] * t + 0.5).astype(np.uint8)
    if subject is not None:
        x, y, sw, sh = subject
        weight = alpha[y : y + sh, x : x + sw].astype(np.float32) * np.float32(1.0 / 255.0)
        out[y : y + sh, x : x + sw] = cv2.blendLinear(
            np.ascontiguousarray(placed[y : y + sh, x : x + sw, :3]),
            np.ascontiguousarray(out[y : y + sh, x : x + sw]),
            weight,
            np.float32(1.0) - weight,
        )
    return out


@dataclass(frozen=True)
class Rendered:
    """The output pixels and the facts to report."""

    pixels: npt.NDArray[np.uint8]
    subject_box: Box | None
    """The subject's solid part (alpha ≥ 0.5) on the canvas."""
    coverage: float
    """Mean alpha of the subject over the canvas."""
    shadow: str | None


def render(
    rgba: ImageArray,
    spec: CutoutSpec,
    subject: Box | None,
    background_image: ImageArray | None = None,
) -> Rendered:
    """Lay ``rgba`` (the cut-out at the input's size, straight alpha) out as ``spec`` says;
    ``subject`` is its main object box (``None``: nothing found, the whole frame is used)."""
    placed = rgba
    if spec.changes_geometry or spec.legacy_crop:
        placed = place(rgba, plan_layout(rgba.shape[:2], subject, spec))
    alpha = placed[..., 3]
    solid = bounding_box(alpha >= 128)
    coverage = round(float(alpha.mean()) / 255.0, 4)
    if spec.channels == "alpha":
        return Rendered(np.ascontiguousarray(alpha), solid, coverage, None)
    transmittance, drawn = (None, None)
    if spec.shadow is not None:
        transmittance, drawn = shadow_transmittance(placed, spec.shadow)
    background: tuple[int, int, int] | ImageArray | None = spec.bg_color
    if spec.bg_image and background_image is not None:
        background = cover(background_image, placed.shape[1], placed.shape[0])
    pixels = composite(placed, background, transmittance)
    return Rendered(pixels, solid, coverage, drawn)
