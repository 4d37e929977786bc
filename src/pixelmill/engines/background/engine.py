"""Background-removal engines: ``background_removal`` (any photo, saliency model) and
``make_transparent`` (colour key when the background is plain, saliency model otherwise).

Both return an RGBA image with a real alpha channel by default. An input that already has alpha
keeps its transparency: the new matte is multiplied into it. The output controls (``options.py``:
crop, size, scale, position, background, shadow, channels, format, presets) are applied to that
cut-out by ``canvas.render``; with none of them the cut-out is returned as it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

import cv2
import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from pixelmill.engines.background.canvas import render
from pixelmill.engines.background.colorkey import (
    BoolArray,
    border_colour,
    colour_key_matte,
)
from pixelmill.engines.background.foreground import estimate_foreground
from pixelmill.engines.background.models import RembgSaliency, best_model
from pixelmill.engines.background.options import (
    CutoutOutputParams,
    CutoutSpec,
    FillParams,
    SubjectParams,
    cutout_conflicts,
    resolve_cutout,
)
from pixelmill.engines.background.regions import COMPILED as REGIONS
from pixelmill.engines.background.subject import SubjectMatte, subject_matte
from pixelmill.engines.base import (
    BaseEngine,
    EngineError,
    EngineInputs,
    EngineResult,
    ImageArray,
    OutputImage,
)
from pixelmill.engines.runtime.segmentation import (
    U2NETP,
    Box,
    Mask,
    guided_radius,
    main_object_box,
    mask_to_alpha,
    salient_mask,
)

EDGES = (
    "trimap from the model's confidence (opaque inside the subject, enclosed holes filled) + "
    "guided-filter matting in the edge band + edge colour decontamination"
)

SALIENT_METHOD = f"u2netp salient-object mask (320² model) + {EDGES}"


def _checked_spec(image: ImageArray, params: BaseModel) -> CutoutSpec:
    """What to make of the cut-out of ``image`` (refused unless 8-bit RGB(A), 4 px or more)."""
    if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
        raise EngineError(f"expected an 8-bit RGB or RGBA image, got {image.dtype} {image.shape}")
    if min(image.shape[:2]) < 4:
        raise EngineError("image too small: both sides must be at least 4 pixels")
    return resolve_cutout(params)


def _refuse_conflicts(params: BaseModel) -> None:
    problems = cutout_conflicts(params)
    if problems:
        raise EngineError("; ".join(problems))


def compose_rgba(
    image: ImageArray, alpha: npt.NDArray[np.float32], rgb: ImageArray | None = None
) -> ImageArray:
    """RGBA from colours (``rgb`` or the image's own) and a 0..1 ``alpha``. An existing alpha
    channel in ``image`` is multiplied in; fully transparent pixels get black colour so they
    compress well and leak nothing."""
    colours = image[..., :3] if rgb is None else rgb
    a = alpha
    if image.shape[2] == 4:
        a = a * (image[..., 3].astype(np.float32) / 255.0)
    a8 = (np.clip(a, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)
    out = np.asarray(cv2.merge([np.ascontiguousarray(colours), a8]), dtype=np.uint8)
    # Where alpha is 0 every channel becomes 0 (the alpha already is).
    return np.asarray(cv2.bitwise_and(out, out, mask=a8), dtype=np.uint8)


def cutout_from(image: ImageArray, matte: SubjectMatte | Mask) -> ImageArray:
    """RGBA cut-out of ``image`` with the alpha of ``matte`` (a :class:`SubjectMatte`, or a raw
    soft saliency mask), its soft edges unmixed from the old background."""
    alpha = matte.alpha if isinstance(matte, SubjectMatte) else mask_to_alpha(matte)
    h, w = image.shape[:2]
    colours = estimate_foreground(image, alpha, sigma=float(guided_radius(h, w) + 1))
    return compose_rgba(image, alpha, colours)


def salient_cutout(image: ImageArray) -> tuple[ImageArray, Mask]:
    """RGBA cut-out of ``image``'s salient object (opaque inside, soft edges with the
    background colour unmixed) and its alpha."""
    matte = subject_matte(image, "object")
    return cutout_from(image, matte), matte.alpha


def _coverage(rgba: ImageArray) -> float:
    return round(float(rgba[..., 3].mean()) / 255.0, 4)


def _file_format(spec: CutoutSpec, pixels: ImageArray) -> str:
    """The format hint: the caller's, else PNG for transparency and JPEG for opaque pixels."""
    if spec.channels == "alpha":
        return "png"
    if spec.format == "jpg":
        return "jpeg"
    if spec.format != "auto":
        return spec.format
    return "png" if pixels.ndim == 3 and pixels.shape[2] == 4 else "jpeg"


def _background_image(inputs: EngineInputs, spec: CutoutSpec) -> ImageArray | None:
    if not spec.bg_image:
        return None
    image = inputs.extra.get("background")
    if image is None:
        raise EngineError("a background image was asked for but none was given to the engine")
    return image


def finish_cutout(
    rgba: ImageArray,
    spec: CutoutSpec,
    box: Box | None,
    details: dict[str, Any],
    background: ImageArray | None = None,
) -> EngineResult:
    """The engine result for the cut-out ``rgba`` (input size) laid out as ``spec`` says;
    ``box`` is the main object's box in the input (where crops and scales are measured)."""
    if spec.is_plain and not spec.legacy_crop:
        pixels, subject_box, coverage, shadow = rgba, box, _coverage(rgba), None
    else:
        rendered = render(rgba, spec, box, background)
        pixels, subject_box = rendered.pixels, rendered.subject_box
        coverage, shadow = rendered.coverage, rendered.shadow
    fmt = _file_format(spec, pixels)
    details.update(
        foreground_coverage=coverage,
        width=int(pixels.shape[1]),
        height=int(pixels.shape[0]),
        cropped=bool((spec.crop or spec.legacy_crop) and box is not None),
        subject_box=list(subject_box) if subject_box else None,
        background=(
            "image"
            if spec.bg_image
            else "#{:02x}{:02x}{:02x}".format(*spec.bg_color)
            if spec.bg_color
            else "transparent"
        ),
        shadow=shadow,
        channels=spec.channels,
        format=fmt,
    )
    if spec.preset:
        details["preset"] = spec.preset
    return EngineResult([OutputImage(pixels, "result", preferred_format=fmt)], details)


class BackgroundRemovalParams(FillParams, CutoutOutputParams, SubjectParams):
    """Options for ``background_removal``; all optional. Names follow remove.bg's API."""

    crop_to_object: bool = Field(
        False,
        description=(
            "crop the result to the main object's bounding box (2 % margin, within the image); "
            "crop with crop_margin is the general form"
        ),
    )


class BackgroundRemovalEngine(BaseEngine[BackgroundRemovalParams]):
    """Cut the main subject out of any photo: RGBA with the background transparent, or laid
    out on a canvas, a colour or a photo as the output controls say."""

    name: ClassVar[str] = "background_removal"
    Params: ClassVar[type[BaseModel]] = BackgroundRemovalParams
    models = (U2NETP, REGIONS)

    def __init__(self, models_dir: Path | None = None) -> None:
        """``models_dir``: ``PIXELMILL_MODELS_DIR``; the best rembg model there replaces the
        packaged U²-Net-p as the salient-object source (:mod:`.models`)."""
        super().__init__()
        self.models_dir = models_dir
        self.saliency: RembgSaliency | None = None

    def _load(self) -> None:
        super()._load()
        best = best_model(self.models_dir)
        if best is not None:
            saliency = RembgSaliency(best)
            saliency.load()
            self.saliency = saliency

    def _validate(self, params: BackgroundRemovalParams) -> None:
        _refuse_conflicts(params)

    def _run(self, inputs: EngineInputs, params: BackgroundRemovalParams) -> EngineResult:
        image = inputs.image
        spec = _checked_spec(image, params)
        background = _background_image(inputs, spec)
        matte = subject_matte(image, params.type, self.saliency)
        rgba = cutout_from(image, matte)
        box = main_object_box(matte.mask)
        details: dict[str, Any] = {
            "method": f"{matte.method} + {EDGES}",
            "type": params.type,
            "detected_type": matte.detected,
            "object_box": list(box) if box else None,
        }
        if params.type in ("auto", "person"):
            details["faces"] = matte.faces
        if self.saliency is not None:
            details["model"] = self.saliency.name
        return finish_cutout(rgba, spec, box, details, background)


class MakeTransparentParams(CutoutOutputParams):
    """Options for ``make_transparent``: the method, and the output controls that keep the
    result transparent (no new background)."""

    method: Literal["auto", "color_key", "salient"] = Field(
        "auto",
        description=(
            "auto: colour key when the image border is one plain colour (logos, icons, studio "
            "shots), salient-object mask otherwise; color_key: always key out the border colour; "
            "salient: always use the salient-object mask"
        ),
    )


class MakeTransparentEngine(BaseEngine[MakeTransparentParams]):
    """Make an image's background transparent, choosing the method that fits the image."""

    name: ClassVar[str] = "make_transparent"
    Params: ClassVar[type[BaseModel]] = MakeTransparentParams
    models = (U2NETP, REGIONS)

    def _validate(self, params: MakeTransparentParams) -> None:
        _refuse_conflicts(params)

    def _run(self, inputs: EngineInputs, params: MakeTransparentParams) -> EngineResult:
        image = inputs.image
        spec = _checked_spec(image, params)
        border = border_colour(image)
        use_key = params.method == "color_key" or (params.method == "auto" and border.is_uniform())
        details: dict[str, Any] = {"border_uniformity": round(border.uniformity, 4)}

        if use_key:
            saliency: list[Mask] = []

            def hole_is_object(holes: list[BoolArray]) -> list[bool]:
                # An enclosed patch of the background colour is part of the object (a white
                # label on a white-background product) when the saliency model says so; the
                # inside of a logo's letters is not salient.
                if not saliency:
                    saliency.append(salient_mask(image))
                return [bool(saliency[0][m].mean() >= 0.5) for m in holes]

            matte = colour_key_matte(image, border, hole_is_object)
            rgba = compose_rgba(image, matte.alpha, matte.rgb)
            method = f"colour key on the plain border colour {border.hex} with unmixed soft edges"
            if saliency:
                method += "; enclosed regions of that colour judged by the u2netp salient mask"
            details.update(
                key_colour=border.hex,
                key_tolerance=round(matte.tolerance, 1),
                enclosed_regions=matte.holes_found,
                enclosed_regions_cleared=matte.holes_cleared,
            )
        else:
            rgba, _ = salient_cutout(image)
            method = SALIENT_METHOD
            if params.method == "auto":
                method += " (the border is not one plain colour)"

        details["method"] = method
        box = None
        if not spec.is_plain:
            box = main_object_box(rgba[..., 3].astype(np.float32) * np.float32(1.0 / 255.0))
        return finish_cutout(rgba, spec, box, details)
