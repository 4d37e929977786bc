"""Style transfer to one of eight named looks, with a strength blend.

The looks are classical recipes (see :mod:`~pixelmill.engines.style.filters`): OpenCV's
non-photorealistic rendering filters and CIELAB colour grading. No neural style model is
available offline, so a style cannot be learned from an arbitrary style image.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import cv2
import numpy as np
from pydantic import BaseModel, Field

from pixelmill.engines.base import BaseEngine, EngineInputs, EngineResult, ImageArray, OutputImage
from pixelmill.engines.runtime.colour import merge_alpha, split_alpha
from pixelmill.engines.style.filters import DESCRIPTIONS, STYLES

StyleName = Literal[
    "cinematic", "anime", "oil_painting", "watercolor", "sketch", "pop_art", "cyberpunk", "vintage"
]

PAINTERLY = frozenset({"anime", "oil_painting", "watercolor", "sketch", "pop_art"})
"""Styles built on neighbourhood filters whose cost grows with the area (stylization is about
630 ms/MP); above :data:`MAX_WORK_PIXELS` they run on a downscaled copy and are resized back,
which a brush-stroke look tolerates. The colour grades always run at full size."""

MAX_WORK_PIXELS = 2_000_000


class StyleParams(BaseModel):
    """Options for ``style_transfer``."""

    style: StyleName = Field(description="the look to apply")
    strength: float = Field(
        1.0, ge=0.0, le=1.0, description="blend with the original: 0 = unchanged, 1 = full style"
    )


def _resize(img: ImageArray, w: int, h: int) -> ImageArray:
    interp = cv2.INTER_AREA if w < img.shape[1] else cv2.INTER_CUBIC
    return np.asarray(cv2.resize(img, (w, h), interpolation=interp), dtype=np.uint8)


def apply_style(rgb: ImageArray, style: str, strength: float = 1.0) -> ImageArray:
    """Apply ``style`` to an RGB uint8 image and blend it with the original by ``strength``."""
    h, w = rgb.shape[:2]
    work = rgb
    if style in PAINTERLY and h * w > MAX_WORK_PIXELS:
        f = (MAX_WORK_PIXELS / (h * w)) ** 0.5
        work = _resize(rgb, max(1, round(w * f)), max(1, round(h * f)))
    styled = STYLES[style](np.ascontiguousarray(work))
    if styled.shape[:2] != (h, w):
        styled = _resize(styled, w, h)
    if strength >= 1.0:
        return styled
    out = cv2.addWeighted(styled, strength, rgb, 1.0 - strength, 0.0)
    return np.asarray(out, dtype=np.uint8)


class StyleTransferEngine(BaseEngine[StyleParams]):
    """``style_transfer``: eight classical looks (see ``StyleParams.style``)."""

    name: ClassVar[str] = "style_transfer"
    Params: ClassVar[type[BaseModel]] = StyleParams

    def _run(self, inputs: EngineInputs, params: StyleParams) -> EngineResult:
        rgb, alpha = split_alpha(inputs.image)
        out = apply_style(rgb, params.style, params.strength)
        h, w = rgb.shape[:2]
        downscaled = params.style in PAINTERLY and h * w > MAX_WORK_PIXELS
        method = f"classical '{params.style}' look: {DESCRIPTIONS[params.style]}"
        if params.strength < 1.0:
            method += f"; blended with the original at strength {params.strength:.2f}"
        if downscaled:
            method += "; rendered at 2 MP and resized back"
        details = {"method": method, "style": params.style, "strength": params.strength}
        return EngineResult([OutputImage(merge_alpha(out, alpha), label=params.style)], details)
