"""The ``edit`` engine (also behind ``image_to_image``): a text prompt turned into real edits.

The prompt is read by a rule-based interpreter (``grammar.py``) into ordered steps, and each
step is a classical operation: background replacement with a procedural backdrop (the
``replace_background`` engine's compositor), background removal or portrait-mode blur using the
U²-Net-p subject mask, shading-preserving recolouring of the object's dominant colour, tonal
adjustments, black and white, sepia, sharpening, vignette, and the named art styles of the
``style_transfer`` engine. There is no generative model: a prompt asking for something outside
this vocabulary is rejected (before any credit is charged, through :meth:`EditEngine.validate`)
rather than answered with an unrelated image.

``strength`` (0..1, default 0.75) scales every step relative to its nominal effect:
``k = strength / 0.75``. Tonal adjustments and blur radii are multiplied by ``k``; looks
(recolour, black and white, sepia, styles) are blended with the previous result by
``min(1, k)``, so the default gives the full look and lower strengths fade it. Replacing or
removing the background is all-or-nothing (a half-transparent background is never what a
prompt asks for), so strength does not apply to those steps.

Between steps the image is kept as uint8 and each step computes in float32 on horizontal strips
(the scenes compositor's ``row_strips``), so a 40 MP photo needs a few bytes per pixel, not ~60.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, Field

from pixelmill.engines.base import (
    BaseEngine,
    EngineError,
    EngineInputs,
    EngineResult,
    ImageArray,
    OutputImage,
)
from pixelmill.engines.edit import adjust
from pixelmill.engines.edit.grammar import EditStep, PromptNotUnderstood, interpret
from pixelmill.engines.replace_background import parse_backdrop_prompt, replace_background
from pixelmill.engines.runtime.layers import (
    decontaminate_image,
    has_meaningful_alpha,
    row_strips,
    to_float,
    to_uint8_rounded,
)
from pixelmill.engines.runtime.palette import color_of
from pixelmill.engines.runtime.segmentation import U2NETP, mask_to_alpha, salient_mask
from pixelmill.engines.runtime.textures import Gray, Rgb
from pixelmill.engines.style import apply_style

DEFAULT_STRENGTH = 0.75
MIN_SUBJECT_FRACTION = 0.003
"""Subject masks covering less than this share of the image count as "no subject"."""
METHOD = "rule-based prompt interpreter + classical image operations (no generative model): {ops}"
_MASK_STEPS = {"replace_background", "remove_background", "blur_background", "recolor"}
_STATS_PIXELS = 250_000
"""Whole-image statistics (mean brightness, dominant colour) are measured on a subsample of
about this many pixels."""

_OP_NAMES = {
    "warmth": "white-balance gains",
    "brightness": "gamma curve",
    "contrast": "contrast stretch",
    "saturation": "saturation scale",
    "sharpen": "unsharp mask",
    "vignette": "radial vignette",
}

StripFn = Callable[[Rgb, int], Rgb]
"""A per-strip operation: ``(strip, first row of the strip in the image) -> result``."""


class EditParams(BaseModel):
    """Options for ``edit`` and ``image_to_image``."""

    prompt: str = Field(
        ..., min_length=1, max_length=1000, description="what to change, in plain words"
    )
    strength: float = Field(
        DEFAULT_STRENGTH, ge=0.0, le=1.0, description="0 = subtle .. 1 = strong (default 0.75)"
    )


def map_strips(
    image: ImageArray, fn: StripFn, blend: float = 1.0, weight: Gray | None = None, margin: int = 0
) -> ImageArray:
    """``image`` with ``fn`` applied strip by strip and blended in by ``blend`` (times the
    per-pixel ``weight`` when given): ``out = x + blend · weight · (fn(x) - x)``. ``margin``
    rows of context are passed to ``fn`` around each strip for neighbourhood filters."""
    h, w = image.shape[:2]
    out = np.empty((h, w, 3), dtype=np.uint8)
    for y0, y1, e0, e1 in row_strips(h, w, margin):
        x = to_float(image[e0:e1])
        y = fn(x, e0)[y0 - e0 : y1 - e0]
        x = x[y0 - e0 : y1 - e0]
        t: Any = np.float32(blend)
        if weight is not None:
            t = weight[y0:y1, :, None] * np.float32(blend)
        out[y0:y1] = to_uint8_rounded(x + t * (y - x))
    return out


def _subsample(image: ImageArray, alpha: Gray | None) -> tuple[Rgb, Gray | None]:
    h, w = image.shape[:2]
    step = max(1, math.ceil(math.sqrt(h * w / _STATS_PIXELS)))
    sub_a = None if alpha is None else np.ascontiguousarray(alpha[::step, ::step])
    return to_float(np.ascontiguousarray(image[::step, ::step])), sub_a


def _region_weight(region: str, alpha: Gray | None) -> Gray | None:
    if region == "image" or alpha is None:
        return None
    return (1.0 - alpha) if region == "background" else alpha


class EditEngine(BaseEngine[EditParams]):
    """Edit an image as a prompt describes (see the module docstring for what is understood)."""

    name: ClassVar[str] = "edit"
    Params: ClassVar[type[BaseModel]] = EditParams
    models = (U2NETP,)

    def _validate(self, params: EditParams) -> None:
        """Reject a prompt with nothing recognisable, cheaply and before any charge (raises
        :class:`EngineError` with examples of prompts that work)."""
        self.steps(params.prompt)

    @staticmethod
    def steps(prompt: str) -> list[EditStep]:
        """The interpreted steps of ``prompt`` (``EngineError`` when there are none)."""
        try:
            return interpret(prompt)
        except PromptNotUnderstood as exc:
            raise EngineError(str(exc)) from exc

    def _run(self, inputs: EngineInputs, params: EditParams) -> EngineResult:
        steps = self.steps(params.prompt)
        image = inputs.image
        if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
            raise EngineError(f"expected an 8-bit RGB or RGBA image, got {image.shape}")
        k = params.strength / DEFAULT_STRENGTH

        own_alpha = has_meaningful_alpha(image)
        alpha: Gray | None = None
        mask_source = None
        if own_alpha:
            alpha, mask_source = image[..., 3].astype(np.float32) / 255.0, "the image's alpha"
        elif any(s.kind in _MASK_STEPS or s.region != "image" for s in steps):
            alpha = mask_to_alpha(salient_mask(image))
            mask_source = "U²-Net-p salient-object mask"
            if float(np.count_nonzero(alpha > 0.5)) < MIN_SUBJECT_FRACTION * alpha.size:
                raise EngineError(
                    "no main subject found in the image, so its background cannot be told apart"
                )
        # An input that was already a cut-out stays one; otherwise alpha appears only when a
        # step removes the background.
        out_alpha: Gray | None = alpha if own_alpha else None

        cur = np.ascontiguousarray(image[..., :3])
        ops: list[str] = []
        for step in steps:
            cur, out_alpha = self._apply(step, cur, alpha, out_alpha, k, ops)

        if out_alpha is not None:
            a8 = np.clip(out_alpha * 255.0 + 0.5, 0, 255).astype(np.uint8)
            out = OutputImage(np.dstack([cur, a8]), "result", preferred_format="png")
        else:
            out = OutputImage(cur, "result")
        details: dict[str, Any] = {
            "method": METHOD.format(ops="; ".join(dict.fromkeys(ops))),
            "interpreted_as": [s.description for s in steps],
            "steps": [s.kind for s in steps],
            "strength": params.strength,
            "mask": mask_source,
            "has_alpha": out_alpha is not None,
        }
        return EngineResult([out], details)

    @staticmethod
    def _apply(
        step: EditStep,
        cur: ImageArray,
        alpha: Gray | None,
        out_alpha: Gray | None,
        k: float,
        ops: list[str],
    ) -> tuple[ImageArray, Gray | None]:
        """Run one step on the uint8 RGB ``cur``; returns the new image and output alpha."""
        look = min(1.0, k)
        kind = step.kind
        if kind == "replace_background":
            assert alpha is not None
            request = parse_backdrop_prompt(step.value or "")
            ops.append("procedural backdrop composited behind the subject mask")
            return replace_background(cur, alpha, request, 0), None
        if kind == "remove_background":
            assert alpha is not None
            ops.append("subject mask as alpha, edge colours decontaminated")
            return decontaminate_image(cur, alpha), alpha
        if kind == "blur_background":
            assert alpha is not None
            ops.append("disc lens blur of the background in linear light")
            plate = adjust.blurred_background(cur, alpha, step.amount * k)
            return map_strips(
                cur, lambda x, e0: to_float(plate[e0 : e0 + x.shape[0]]), weight=1.0 - alpha
            ), out_alpha
        if kind == "recolor":
            color = color_of(step.value or "")
            sub, sub_a = _subsample(cur, alpha)
            if step.target == "image":
                ops.append("Lab tint")
                mean_all = adjust.mean_lightness(sub)
                return map_strips(
                    cur, lambda x, _: adjust.recolor(x, color, mean_all), 0.5 * look
                ), out_alpha
            assert alpha is not None
            assert sub_a is not None
            ops.append("Lab recolour of the main object's dominant colour, shading kept")
            dominant = adjust.find_dominant_colour(sub, sub_a)
            weight = np.empty_like(alpha)
            h, w = alpha.shape
            for y0, y1, e0, e1 in row_strips(h, w, 3):
                strip = adjust.dominant_colour_weight(to_float(cur[e0:e1]), alpha[e0:e1], dominant)
                weight[y0:y1] = strip[y0 - e0 : y1 - e0]
            mean_l = adjust.mean_lightness(sub, sub_a)
            return map_strips(
                cur, lambda x, _: adjust.recolor(x, color, mean_l), look, weight
            ), out_alpha
        if kind == "monochrome":
            ops.append("Rec. 709 luma")
            t = min(1.0, look * step.amount)
            return map_strips(cur, lambda x, _: adjust.monochrome(x), t), out_alpha
        if kind == "sepia":
            ops.append("sepia matrix")
            t = min(1.0, look * step.amount)
            return map_strips(cur, lambda x, _: adjust.sepia(x), t), out_alpha
        if kind == "style":
            ops.append(f"style_transfer filters ({step.value})")
            return apply_style(cur, step.value or "", min(1.0, look * step.amount)), out_alpha
        return EditEngine._adjust(step, cur, alpha, step.amount * k, ops), out_alpha

    @staticmethod
    def _adjust(
        step: EditStep, cur: ImageArray, alpha: Gray | None, amount: float, ops: list[str]
    ) -> ImageArray:
        """Tonal adjustments, optionally limited to the background or the subject."""
        h, w = cur.shape[:2]
        weight = _region_weight(step.region, alpha)
        margin = 0
        pivot = 0.5
        sigma = adjust.sharpen_sigma(h, w)

        def strip_op(x: Rgb, top: int) -> Rgb:
            if step.kind == "warmth":
                return adjust.warmth(x, amount)
            if step.kind == "brightness":
                return adjust.brightness(x, amount)
            if step.kind == "contrast":
                return adjust.contrast(x, amount, pivot)
            if step.kind == "saturation":
                return adjust.saturation(x, amount)
            if step.kind == "sharpen":
                return adjust.sharpen(x, amount, sigma)
            return adjust.vignette(x, amount, top, h)

        if step.kind == "contrast":
            pivot = float(adjust.luma(_subsample(cur, None)[0]).mean())
        elif step.kind == "sharpen":
            margin = adjust.sharpen_reach(sigma, amount)
        elif step.kind not in ("warmth", "brightness", "saturation", "vignette"):
            raise EngineError(f"edit step {step.kind!r} has no implementation")
        ops.append(
            "Gaussian soften" if step.kind == "sharpen" and amount < 0 else _OP_NAMES[step.kind]
        )
        return map_strips(cur, strip_op, weight=weight, margin=margin)
