"""The ``replace_background`` engine: keep the subject where it is and paint a new background
described by a prompt.

The subject is cut out for its ``type`` (the background package's mattes: the U²-Net-p
salient-object mask, fused with MediaPipe person segmentation when the subject is a person), or
taken from the image's own alpha channel when it has a real one; its edge colours are
decontaminated, and it is composited, unmoved and unscaled, over a procedural backdrop picked
from the prompt's keywords (``prompt.py``), with a contact shadow where it stands and light
colour harmonisation. No generative model is used.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

import cv2
import numpy as np
from pydantic import BaseModel, Field

from pixelmill.engines.background import (
    REGIONS,
    QualityParams,
    SubjectParams,
    SubjectType,
    subject_matte,
)
from pixelmill.engines.base import (
    BaseEngine,
    EngineError,
    EngineInputs,
    EngineResult,
    ImageArray,
    OutputImage,
)
from pixelmill.engines.replace_background.prompt import (
    KNOWN_TERMS,
    BackdropRequest,
    parse_backdrop_prompt,
)
from pixelmill.engines.runtime.layers import (
    Harmony,
    Layer,
    alpha_box,
    decontaminate,
    decontaminate_image,
    harmony_for,
    has_meaningful_alpha,
    layer_in_place,
    row_strips,
    to_float,
    to_uint8,
    to_uint8_rounded,
)
from pixelmill.engines.runtime.segmentation import U2NETP
from pixelmill.engines.runtime.shadows import add_drop_shadow, add_floor_shadow, add_reflection
from pixelmill.engines.runtime.textures import Gray, Rgb

METHOD = (
    "procedural backdrop, no generative model: subject cut out ({cutout}), kept in place and "
    "composited over a backdrop chosen from the prompt's keywords, with a contact shadow and "
    "light colour harmonisation"
)
MIN_SUBJECT_FRACTION = 0.003


class ReplaceBackgroundParams(SubjectParams, QualityParams):
    """Options for ``replace_background``: the prompt, and of the cut-out controls those that
    make sense for a composite (the subject type, the file format and its quality)."""

    prompt: str = Field(
        ...,
        min_length=1,
        max_length=1000,
        description="the new background, e.g. 'marble countertop'",
    )
    seed: int = Field(0, ge=0, le=2**32 - 1, description="varies the backdrop's details")
    format: Literal["input", "png", "jpg", "webp"] = Field(
        "input", description="the result's file format; input: the input's own format"
    )


def subject_alpha(image: ImageArray, kind: SubjectType = "object") -> tuple[Gray, str]:
    """The subject's alpha (0..1 float32) and where it came from: the image's own alpha
    channel when it separates a subject, else the matte for the subject ``kind``."""
    if has_meaningful_alpha(image):
        return image[..., 3].astype(np.float32) / 255.0, "the image's own alpha channel"
    matte = subject_matte(image, kind)
    return matte.alpha, _CUTOUTS[matte.detected]


_CUTOUTS = {
    "person": "MediaPipe person segmentation fused with the U²-Net-p salient-object mask",
    "product": "U²-Net-p salient-object mask, largest object only",
    "object": "U²-Net-p salient-object mask",
}


def floor_line(alpha: Gray, default: float) -> tuple[float, bool]:
    """Where the backdrop's floor should start for a subject kept in place, and whether the
    subject stands on it. A subject whose bottom edge is inside the frame stands on a floor
    whose horizon is a little above its base; one cut off by the frame's bottom edge (a
    portrait, a close-up) does not touch any visible floor, so the backdrop keeps its own
    horizon and no contact shadow is drawn."""
    h = alpha.shape[0]
    box = alpha_box(alpha, 0.5)
    if box is None:
        return default, False
    _, y, _, bh = box
    base = y + bh
    if base >= h - 2:
        return default, False
    horizon = (base - 0.12 * bh) / h
    return float(np.clip(horizon, 0.3, 0.85)), True


WORK_PIXELS = 4_000_000
"""Backdrops, shadows and reflections of larger images are painted at about this size and
upscaled: they are smooth, and painting 40 MP of float32 would need gigabytes. The subject
itself is always composited at full resolution."""


def backdrop_rng(seed: int) -> np.random.Generator:
    """The generator a replace-background call paints with, fixed by ``seed``."""
    return np.random.default_rng([seed & 0xFFFFFFFF, 0x5EED])


def _plate(
    image: ImageArray, alpha: Gray, request: BackdropRequest, rng: np.random.Generator
) -> tuple[Rgb, Harmony | None]:
    """The new background with the subject's shadow and reflection, at the size of ``image``
    (already reduced by the caller), and the colour correction for the subject."""
    h, w = alpha.shape
    horizon, standing = floor_line(alpha, request.spec.horizon or 0.6)
    backdrop = request.paint(h, w, rng, horizon)
    layer = layer_in_place(decontaminate(to_float(image), alpha), alpha)
    canvas = backdrop.rgb.copy()
    if request.shadow == "drop":
        add_drop_shadow(canvas, layer)
    elif standing and request.shadow == "floor":
        add_floor_shadow(canvas, layer)
    harmony = harmony_for(layer, backdrop.rgb, backdrop.light, 0.12)
    if standing and request.reflection > 0:
        lit = layer if harmony is None else Layer(harmony.apply(layer.premult, alpha), alpha, 0, 0)
        add_reflection(canvas, lit, request.reflection)
    return canvas, harmony


def replace_background(
    image: ImageArray, alpha: Gray, request: BackdropRequest, seed: int
) -> ImageArray:
    """Composite the subject of ``image`` (RGB(A) uint8, given its ``alpha``) over the backdrop
    ``request`` describes, at the image's own size; the subject does not move. Returns RGB
    uint8.

    The background plate (backdrop, shadow, reflection) is painted at up to
    :data:`WORK_PIXELS` and upscaled; the subject's edge-decontaminated, harmonised colours are
    composited over it at full resolution, strip by strip, so memory stays at a few bytes per
    pixel whatever the input size."""
    h, w = alpha.shape
    rgb = np.ascontiguousarray(image[..., :3])
    f = min(1.0, math.sqrt(WORK_PIXELS / (h * w)))
    if f < 1.0:
        size = (max(1, round(w * f)), max(1, round(h * f)))
        small = np.asarray(cv2.resize(rgb, size, interpolation=cv2.INTER_AREA), np.uint8)
        small_a = np.asarray(cv2.resize(alpha, size, interpolation=cv2.INTER_AREA), np.float32)
    else:
        small, small_a = rgb, alpha
    rng = backdrop_rng(seed)
    canvas, harmony = _plate(small, small_a, request, rng)
    plate = to_uint8(canvas, rng)
    del canvas
    if f < 1.0:
        plate = np.asarray(cv2.resize(plate, (w, h), interpolation=cv2.INTER_CUBIC), np.uint8)
    fg = decontaminate_image(rgb, alpha)
    out = np.empty((h, w, 3), dtype=np.uint8)
    for y0, y1, _, _ in row_strips(h, w):
        a = alpha[y0:y1]
        premult = to_float(fg[y0:y1]) * a[..., None]
        if harmony is not None:
            premult = harmony.apply(premult, a)
        out[y0:y1] = to_uint8_rounded(premult + to_float(plate[y0:y1]) * (1.0 - a)[..., None])
    return out


class ReplaceBackgroundEngine(BaseEngine[ReplaceBackgroundParams]):
    """Replace the background behind the main subject with a backdrop described in words."""

    name: ClassVar[str] = "replace_background"
    Params: ClassVar[type[BaseModel]] = ReplaceBackgroundParams
    models = (U2NETP, REGIONS)

    def _run(self, inputs: EngineInputs, params: ReplaceBackgroundParams) -> EngineResult:
        image = inputs.image
        if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
            raise EngineError(f"expected an 8-bit RGB or RGBA image, got {image.shape}")
        alpha, how = subject_alpha(image, params.type)
        coverage = float(np.count_nonzero(alpha > 0.5)) / alpha.size
        if coverage < MIN_SUBJECT_FRACTION:
            raise EngineError("no subject found in the image to keep in front of a new background")
        request = parse_backdrop_prompt(params.prompt)
        out = replace_background(image, alpha, request, params.seed)
        details: dict[str, Any] = {
            "method": METHOD.format(cutout=how),
            "backdrop": request.description,
            "matched_terms": request.matched_terms,
            "fallback": request.fallback,
            "subject_coverage": round(coverage, 4),
            "width": int(image.shape[1]),
            "height": int(image.shape[0]),
        }
        if request.fallback:
            details["note"] = (
                "no backdrop term recognised in the prompt, so a neutral studio sweep was used; "
                f"understood: {KNOWN_TERMS}"
            )
        fmt = {"input": None, "jpg": "jpeg"}.get(params.format, params.format)
        return EngineResult([OutputImage(out, "result", preferred_format=fmt)], details)
