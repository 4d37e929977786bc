"""The ``replace_background`` engine: keep the subject where it is and paint a new background
described by a prompt.

The subject is cut out with the U²-Net-p salient-object mask (or the image's own alpha channel
when it has a real one), its edge colours are decontaminated, and it is composited, unmoved and
unscaled, over a procedural backdrop picked from the prompt's keywords (``prompt.py``), with a
contact shadow where it stands and light colour harmonisation. No generative model is used.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, Field

from pixelmill.engines.background.engine import mask_to_alpha
from pixelmill.engines.background.segment import U2NETP, salient_mask
from pixelmill.engines.base import EngineError, EngineInputs, EngineResult, ImageArray, OutputImage
from pixelmill.engines.replace_background.prompt import (
    KNOWN_TERMS,
    BackdropRequest,
    parse_backdrop_prompt,
)
from pixelmill.engines.scenes.compose import (
    alpha_box,
    composite,
    decontaminate,
    has_meaningful_alpha,
    layer_in_place,
    to_float,
    to_uint8,
)
from pixelmill.engines.scenes.textures import Gray, Rgb

METHOD = (
    "procedural backdrop, no generative model: subject cut out ({cutout}), kept in place and "
    "composited over a backdrop chosen from the prompt's keywords, with a contact shadow and "
    "light colour harmonisation"
)
MIN_SUBJECT_FRACTION = 0.003


class ReplaceBackgroundParams(BaseModel):
    """Options for ``replace_background``."""

    prompt: str = Field(
        ...,
        min_length=1,
        max_length=1000,
        description="the new background, e.g. 'marble countertop'",
    )
    seed: int = Field(0, ge=0, le=2**32 - 1, description="varies the backdrop's details")


def subject_alpha(image: ImageArray) -> tuple[Gray, str]:
    """The subject's alpha (0..1 float32) and where it came from: the image's own alpha
    channel when it separates a subject, else the U²-Net-p mask."""
    if has_meaningful_alpha(image):
        return image[..., 3].astype(np.float32) / 255.0, "the image's own alpha channel"
    return mask_to_alpha(salient_mask(image)), "U²-Net-p salient-object mask"


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


def composite_over_backdrop(
    rgb: Rgb, alpha: Gray, request: BackdropRequest, rng: np.random.Generator
) -> Rgb:
    """The float core of :func:`replace_background`: ``rgb`` (float32 0..1) with its subject
    ``alpha`` over the requested backdrop, same size; the subject does not move."""
    h, w = alpha.shape
    horizon, standing = floor_line(alpha, request.spec.horizon or 0.6)
    backdrop = request.paint(h, w, rng, horizon)
    layer = layer_in_place(decontaminate(rgb, alpha), alpha)
    shadow = request.shadow if standing or request.shadow == "drop" else "none"
    return composite(
        backdrop,
        layer,
        shadow=shadow,
        reflection=request.reflection if standing else 0.0,
        harmonise_amount=0.12,
    )


def backdrop_rng(seed: int) -> np.random.Generator:
    """The generator a replace-background call paints with, fixed by ``seed``."""
    return np.random.default_rng([seed & 0xFFFFFFFF, 0x5EED])


def replace_background(
    image: ImageArray, alpha: Gray, request: BackdropRequest, seed: int
) -> ImageArray:
    """Composite the subject of ``image`` (given its ``alpha``) over the backdrop ``request``
    describes, at the image's own size. Returns RGB uint8."""
    rng = backdrop_rng(seed)
    out = composite_over_backdrop(to_float(image), alpha, request, rng)
    return to_uint8(out, rng)


class ReplaceBackgroundEngine:
    """Replace the background behind the main subject with a backdrop described in words."""

    name: ClassVar[str] = "replace_background"
    Params: ClassVar[type[BaseModel]] = ReplaceBackgroundParams

    def load(self) -> None:
        """Load the segmentation model (once per process)."""
        U2NETP.load()

    def run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        assert isinstance(params, ReplaceBackgroundParams)
        image = inputs.image
        if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
            raise EngineError(f"expected an 8-bit RGB or RGBA image, got {image.shape}")
        alpha, how = subject_alpha(image)
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
        return EngineResult([OutputImage(out, "result")], details)
