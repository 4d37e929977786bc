"""Colorize: give a greyscale photo plausible colour, from a reference, a palette, or a
procedural default. No learned colourisation model is available offline, so the method is
always classical and ``details.method`` says which of the three was used.

Precedence: a reference image (``inputs.extra["reference"]``) wins over ``palette``, which wins
over the default. With a catalogued colouriser in ``PIXELMILL_MODELS_DIR`` (DDColor,
:mod:`pixelmill.models`) the default is that network instead (``details.model`` names it). The
output keeps the input's lightness exactly; only chroma is added.

Colour input: an image whose chroma varies independently of its lightness (a colour photo,
not a sepia or duotone print; see :func:`is_colour_image`) is first reduced to its CIELAB
lightness and then colourised like any grey photo, with ``details.input_was_color = true`` and
a note. This makes "recolour this photo with that palette or reference" work, and is stated
rather than silently returning the original.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np
from pydantic import BaseModel, Field, field_validator

from pixelmill.engines.base import BaseEngine, EngineError, EngineInputs, EngineResult, OutputImage
from pixelmill.engines.colorize.scene import scene_chroma
from pixelmill.engines.colorize.transfer import (
    FloatImage,
    palette_chroma,
    parse_hex,
    reference_chroma,
)
from pixelmill.engines.runtime import faces as face_detection
from pixelmill.engines.runtime.colour import from_lab, merge_alpha, split_alpha, to_lab
from pixelmill.engines.runtime.families.colorizer import Colorizer
from pixelmill.engines.runtime.families.presence import best_runner

COLOUR_RESIDUAL_THRESHOLD = 3.0
"""``a*b*`` spread (after removing what lightness explains) above which an image counts as
colour. Grey reads 0.0, a sepia print 0.4 (1.7 after JPEG), colour photos 4.9–19."""


def colour_residual(lab: FloatImage) -> float:
    """How much of the image's chroma is *not* a function of lightness: the standard deviation
    of ``a*`` and ``b*`` around their per-lightness-bin mean (32 bins). Tinted monochrome
    (sepia, cyanotype, duotone) has one chroma per lightness and reads near 0."""
    lightness = lab[..., 0].ravel()
    a = lab[..., 1].ravel()
    b = lab[..., 2].ravel()
    idx = np.clip((lightness / 100.0 * 32).astype(np.intp), 0, 31)
    count = np.maximum(np.bincount(idx, minlength=32), 1)
    mean_a = np.bincount(idx, weights=a, minlength=32) / count
    mean_b = np.bincount(idx, weights=b, minlength=32) / count
    return float(np.hypot((a - mean_a[idx]).std(), (b - mean_b[idx]).std()))


def is_colour_image(lab: FloatImage) -> bool:
    """Whether a CIELAB image is a colour photo rather than grey or tinted monochrome."""
    return colour_residual(lab) > COLOUR_RESIDUAL_THRESHOLD


class ColorizeParams(BaseModel):
    """Options for ``colorize``."""

    palette: list[str] | None = Field(
        None,
        min_length=1,
        max_length=16,
        description=(
            "hex colours (e.g. ['#1b2a49', '#c8a165', '#f4e9d8']) mapped onto the image's "
            "lightness bands, dark to light; ignored when a reference image is given"
        ),
    )

    @field_validator("palette")
    @classmethod
    def _valid_hex(cls, value: list[str] | None) -> list[str] | None:
        if value is not None:
            for colour in value:
                parse_hex(colour)
        return value


class ColorizeEngine(BaseEngine[ColorizeParams]):
    """``colorize``: reference-based colour transfer, palette mapping, or procedural palettes."""

    name: ClassVar[str] = "colorize"
    Params: ClassVar[type[BaseModel]] = ColorizeParams

    def __init__(self, models_dir: Path | None = None) -> None:
        """``models_dir``: ``PIXELMILL_MODELS_DIR``; a catalogued colouriser there (DDColor)
        replaces the procedural default (a reference or a palette still wins)."""
        super().__init__()
        self.models_dir = models_dir
        self.colorizer: Colorizer | None = None

    def _load(self) -> None:
        """Build the face detector used by the default palette, and the best colouriser
        present in the models folder, if any."""
        face_detection.load()
        runner = best_runner("colorize", self.models_dir)
        if isinstance(runner, Colorizer):
            self.colorizer = runner

    def _run(self, inputs: EngineInputs, params: ColorizeParams) -> EngineResult:
        rgb, alpha = split_alpha(inputs.image)
        lab = to_lab(rgb)
        was_colour = is_colour_image(lab)
        lightness = np.ascontiguousarray(lab[..., 0])
        reference = inputs.extra.get("reference")
        details: dict[str, object] = {"input_was_color": was_colour}
        if reference is not None:
            if reference.ndim != 3 or reference.shape[2] not in (3, 4):
                raise EngineError("the reference must be an RGB or RGBA image")
            ref_lab = to_lab(np.ascontiguousarray(reference[..., :3]))
            if not is_colour_image(ref_lab):
                raise EngineError("the reference image has no colour to transfer")
            ab = reference_chroma(lightness, reference)
            method = (
                "reference-based colour transfer (Welsh et al. 2002 style: luminance "
                "remapping, matching on lightness + local standard deviation + context, a*b* "
                "copied from the reference, guided-filter smoothing)"
            )
            details["mode"] = "reference"
        elif params.palette:
            ab = palette_chroma(lightness, params.palette)
            method = (
                f"palette mapping: {len(params.palette)} colours assigned to lightness bands "
                "(gradient map), lightness kept"
            )
            details["mode"] = "palette"
        elif self.colorizer is not None:
            grey = from_lab(np.dstack([lightness, np.zeros_like(lab[..., 1:])]))
            ab = self.colorizer.chroma(grey)
            method = (
                f"{self.colorizer.name} (DDColor, ONNX, from PIXELMILL_MODELS_DIR: a learned "
                f"colouriser seeing the lightness at {self.colorizer.side}²), lightness kept"
            )
            details.update(mode="model", model=self.colorizer.name)
        else:
            grey = from_lab(np.dstack([lightness, np.zeros_like(lab[..., 1:])]))
            scene = scene_chroma(lightness, grey)
            ab = scene.ab
            method = (
                f"procedural palette '{scene.palette}' chosen from scene statistics (sky "
                f"{scene.sky_fraction:.0%}, faces {scene.faces}); a heuristic, not a learned "
                "colouriser: colours are plausible guesses, not the true ones"
            )
            details.update(mode="default", palette=scene.palette, sky_fraction=scene.sky_fraction)
        if was_colour:
            method = "input already had colour: reduced to its lightness first; then " + method
            details["note"] = (
                "the input was a colour image; its own colours were discarded and replaced"
            )
        out = from_lab(np.dstack([lightness, ab]).astype(np.float32))
        details["method"] = method
        return EngineResult([OutputImage(merge_alpha(out, alpha))], details)
