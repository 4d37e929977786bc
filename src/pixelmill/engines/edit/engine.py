"""The ``edit`` engine (also behind ``image_to_image``): a text prompt turned into real edits.

The prompt is read by a rule-based interpreter (``grammar.py``) into ordered steps, and each
step is a classical operation: background replacement with a procedural backdrop (the
``replace_background`` engine's compositor), background removal or portrait-mode blur using the
U²-Net-p subject mask, shading-preserving recolouring inside that mask, tonal adjustments, black
and white, sepia, sharpening, vignette, and the named art styles of the ``style_transfer``
engine. There is no generative model: a prompt asking for something outside this vocabulary is
rejected (before any credit is charged, through :meth:`EditEngine.validate`) rather than
answered with an unrelated image.

``strength`` (0..1, default 0.75) scales every step relative to its nominal effect:
``k = strength / 0.75``. Tonal adjustments and blur radii are multiplied by ``k``; looks
(recolour, black and white, sepia, styles) are blended with the previous result by
``min(1, k)``, so the default gives the full look and lower strengths fade it. Replacing or
removing the background is all-or-nothing (a half-transparent background is never what a
prompt asks for), so strength does not apply to those steps.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, Field

from pixelmill.engines.background.engine import mask_to_alpha
from pixelmill.engines.background.segment import U2NETP, salient_mask
from pixelmill.engines.base import EngineError, EngineInputs, EngineResult, ImageArray, OutputImage
from pixelmill.engines.edit import adjust
from pixelmill.engines.edit.grammar import EditStep, PromptNotUnderstood, interpret
from pixelmill.engines.replace_background.engine import replace_background
from pixelmill.engines.replace_background.prompt import parse_backdrop_prompt
from pixelmill.engines.scenes.compose import decontaminate, has_meaningful_alpha, to_float
from pixelmill.engines.scenes.palette import color_of
from pixelmill.engines.scenes.textures import Gray, Rgb
from pixelmill.engines.style import apply_style

DEFAULT_STRENGTH = 0.75
METHOD = "rule-based prompt interpreter + classical image operations (no generative model): {ops}"
_MASK_STEPS = {"replace_background", "remove_background", "blur_background", "recolor"}


class EditParams(BaseModel):
    """Options for ``edit`` and ``image_to_image``."""

    prompt: str = Field(
        ..., min_length=1, max_length=1000, description="what to change, in plain words"
    )
    strength: float = Field(
        DEFAULT_STRENGTH, ge=0.0, le=1.0, description="0 = subtle .. 1 = strong (default 0.75)"
    )


def _blend(before: Rgb, after: Rgb, t: float) -> Rgb:
    if t >= 1.0:
        return after
    return (before + np.float32(t) * (after - before)).astype(np.float32)


def _in_region(before: Rgb, after: Rgb, region: str, alpha: Gray | None) -> Rgb:
    """Keep an adjustment inside the background or the subject only."""
    if region == "image" or alpha is None:
        return after
    w = (1.0 - alpha if region == "background" else alpha)[..., None]
    return (after * w + before * (1.0 - w)).astype(np.float32)


class EditEngine:
    """Edit an image as a prompt describes (see the module docstring for what is understood)."""

    name: ClassVar[str] = "edit"
    Params: ClassVar[type[BaseModel]] = EditParams

    def load(self) -> None:
        """Load the segmentation model (once per process); the styles are classical filters."""
        U2NETP.load()

    def validate(self, params: BaseModel) -> None:
        """Reject a prompt with nothing recognisable, cheaply and before any charge (raises
        :class:`EngineError` with examples of prompts that work)."""
        assert isinstance(params, EditParams)
        self.steps(params.prompt)

    @staticmethod
    def steps(prompt: str) -> list[EditStep]:
        """The interpreted steps of ``prompt`` (``EngineError`` when there are none)."""
        try:
            return interpret(prompt)
        except PromptNotUnderstood as exc:
            raise EngineError(str(exc)) from exc

    def run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        assert isinstance(params, EditParams)
        steps = self.steps(params.prompt)
        image = inputs.image
        if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
            raise EngineError(f"expected an 8-bit RGB or RGBA image, got {image.shape}")
        k = params.strength / DEFAULT_STRENGTH
        look = min(1.0, k)

        own_alpha = has_meaningful_alpha(image)
        alpha: Gray | None = None
        mask_source = None
        if own_alpha:
            alpha, mask_source = image[..., 3].astype(np.float32) / 255.0, "the image's alpha"
        elif any(s.kind in _MASK_STEPS or s.region != "image" for s in steps):
            alpha = mask_to_alpha(salient_mask(image))
            mask_source = "U²-Net-p salient-object mask"
        # An input that was already a cut-out stays one; otherwise alpha appears only when a
        # step removes the background.
        out_alpha: Gray | None = alpha if own_alpha else None

        cur = to_float(image)
        ops: list[str] = []
        for step in steps:
            cur, out_alpha = self._apply(step, cur, alpha, out_alpha, k, look, ops)

        pixels: ImageArray
        rgb8 = np.clip(cur * 255.0 + 0.5, 0, 255).astype(np.uint8)
        if out_alpha is not None:
            a8 = np.clip(out_alpha * 255.0 + 0.5, 0, 255).astype(np.uint8)
            pixels = np.dstack([rgb8, a8])
            out = OutputImage(pixels, "result", preferred_format="png")
        else:
            out = OutputImage(rgb8, "result")
        details: dict[str, Any] = {
            "method": METHOD.format(ops="; ".join(dict.fromkeys(ops))),
            "interpreted_as": [s.description for s in steps],
            "steps": [s.kind for s in steps],
            "strength": params.strength,
            "mask": mask_source,
            "has_alpha": out_alpha is not None,
        }
        return EngineResult([out], details)

    def _apply(
        self,
        step: EditStep,
        cur: Rgb,
        alpha: Gray | None,
        out_alpha: Gray | None,
        k: float,
        look: float,
        ops: list[str],
    ) -> tuple[Rgb, Gray | None]:
        """Run one step; returns the new colours and output alpha."""
        kind = step.kind
        if kind in _MASK_STEPS:
            assert alpha is not None
        if kind == "replace_background":
            assert alpha is not None
            request = parse_backdrop_prompt(step.value or "")
            ops.append("procedural backdrop composited behind the subject mask")
            rgb8 = np.clip(cur * 255.0 + 0.5, 0, 255).astype(np.uint8)
            return to_float(replace_background(rgb8, alpha, request, 0)), None
        if kind == "remove_background":
            assert alpha is not None
            ops.append("subject mask as alpha, edge colours decontaminated")
            return decontaminate(cur, alpha), alpha
        if kind == "blur_background":
            assert alpha is not None
            ops.append("disc lens blur of the background in linear light")
            return adjust.lens_blur_background(cur, alpha, step.amount * k), out_alpha
        if kind == "recolor":
            color = color_of(step.value or "")
            if step.target == "image":
                ops.append("Lab tint")
                return _blend(cur, adjust.recolor(cur, color), 0.5 * look), out_alpha
            ops.append("Lab recolour of the main object's dominant colour, shading kept")
            assert alpha is not None
            region = adjust.dominant_colour_weight(cur, alpha)
            return _blend(cur, adjust.recolor(cur, color, region), look), out_alpha
        if kind == "monochrome":
            ops.append("Rec. 709 luma")
            return _blend(cur, adjust.monochrome(cur), min(1.0, look * step.amount)), out_alpha
        if kind == "sepia":
            ops.append("sepia matrix")
            return _blend(cur, adjust.sepia(cur), min(1.0, look * step.amount)), out_alpha
        if kind == "style":
            ops.append(f"style_transfer filters ({step.value})")
            styled = self._stylise(cur, step.value or "", min(1.0, look * step.amount))
            return styled, out_alpha
        amount = step.amount * k
        fn = {
            "warmth": adjust.warmth,
            "brightness": adjust.brightness,
            "contrast": adjust.contrast,
            "saturation": adjust.saturation,
            "sharpen": adjust.sharpen,
            "vignette": adjust.vignette,
        }[kind]
        ops.append(
            {
                "warmth": "white-balance gains",
                "brightness": "gamma",
                "contrast": "contrast stretch",
                "saturation": "saturation scale",
                "sharpen": "unsharp mask" if amount >= 0 else "Gaussian soften",
                "vignette": "radial vignette",
            }[kind]
        )
        return _in_region(cur, fn(cur, amount), step.region, alpha), out_alpha

    @staticmethod
    def _stylise(cur: Rgb, style: str, strength: float) -> Rgb:
        """Apply a named style with the style-transfer engine's filters, at ``strength``."""
        rgb8 = np.clip(cur * 255.0 + 0.5, 0, 255).astype(np.uint8)
        return to_float(apply_style(rgb8, style, strength))
