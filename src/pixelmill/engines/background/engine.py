"""Background-removal engines: ``background_removal`` (any photo, saliency model) and
``make_transparent`` (colour key when the background is plain, saliency model otherwise).

Both return an RGBA image with a real alpha channel. An input that already has alpha keeps its
transparency: the new matte is multiplied into it.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from pixelmill.engines.background.colorkey import (
    BoolArray,
    border_colour,
    colour_key_matte,
)
from pixelmill.engines.background.foreground import estimate_foreground
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

SALIENT_METHOD = (
    "u2netp salient-object mask (320² model) + guided-filter edge refinement + edge colour "
    "decontamination"
)


def _check_image(image: ImageArray) -> None:
    if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
        raise EngineError(f"expected an 8-bit RGB or RGBA image, got {image.dtype} {image.shape}")
    if min(image.shape[:2]) < 4:
        raise EngineError("image too small: both sides must be at least 4 pixels")


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
    out = np.dstack([colours, a8])
    out[a8 == 0, :3] = 0
    return np.ascontiguousarray(out, dtype=np.uint8)


def salient_cutout(image: ImageArray) -> tuple[ImageArray, Mask]:
    """RGBA cut-out of ``image``'s salient object (soft edges with the background colour
    unmixed) and the raw soft mask it came from."""
    mask = salient_mask(image)
    alpha = mask_to_alpha(mask)
    h, w = image.shape[:2]
    colours = estimate_foreground(image, alpha, sigma=float(guided_radius(h, w) + 1))
    return compose_rgba(image, alpha, colours), mask


def _coverage(rgba: ImageArray) -> float:
    return round(float(rgba[..., 3].mean()) / 255.0, 4)


def _crop(rgba: ImageArray, box: Box | None, margin: float = 0.02) -> ImageArray:
    if box is None:
        return rgba
    h, w = rgba.shape[:2]
    x, y, bw, bh = box
    pad = round(margin * max(h, w))
    x0, y0 = max(0, x - pad), max(0, y - pad)
    x1, y1 = min(w, x + bw + pad), min(h, y + bh + pad)
    return np.ascontiguousarray(rgba[y0:y1, x0:x1])


class BackgroundRemovalParams(BaseModel):
    """Options for ``background_removal``; all optional."""

    crop_to_object: bool = Field(
        False, description="crop the result to the main object's bounding box (2 % margin)"
    )


class BackgroundRemovalEngine(BaseEngine[BackgroundRemovalParams]):
    """Cut the main subject out of any photo: RGBA with the background transparent."""

    name: ClassVar[str] = "background_removal"
    Params: ClassVar[type[BaseModel]] = BackgroundRemovalParams
    models = (U2NETP,)

    def _run(self, inputs: EngineInputs, params: BackgroundRemovalParams) -> EngineResult:
        image = inputs.image
        _check_image(image)
        rgba, mask = salient_cutout(image)
        box = main_object_box(mask)
        if params.crop_to_object:
            rgba = _crop(rgba, box)
        details: dict[str, Any] = {
            "method": SALIENT_METHOD,
            "foreground_coverage": _coverage(rgba),
            "object_box": list(box) if box else None,
            "width": int(rgba.shape[1]),
            "height": int(rgba.shape[0]),
            "cropped": bool(params.crop_to_object and box is not None),
        }
        return EngineResult([OutputImage(rgba, "result", preferred_format="png")], details)


class MakeTransparentParams(BaseModel):
    """Options for ``make_transparent``."""

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
    models = (U2NETP,)

    def _run(self, inputs: EngineInputs, params: MakeTransparentParams) -> EngineResult:
        image = inputs.image
        _check_image(image)
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
        details["foreground_coverage"] = _coverage(rgba)
        details["width"] = int(rgba.shape[1])
        details["height"] = int(rgba.shape[0])
        return EngineResult([OutputImage(rgba, "result", preferred_format="png")], details)
