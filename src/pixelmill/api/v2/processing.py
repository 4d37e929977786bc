"""The v2 synchronous processing endpoints (JSON in, JSON out, API key).

Every endpoint takes ``image_url`` or ``image_base64`` (plain base64; a ``data:`` URI is accepted
too). When both are given, ``image_base64`` is used. Each endpoint is one catalog operation; its
request model is ``ImageInput`` plus the engine's own ``Params`` model, so field names, defaults
and limits are defined once, in the engine."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from pixelmill.api.deps import ApiKeyUser, BaseUrl, Res
from pixelmill.engines.analyze import AnalyzeParams
from pixelmill.engines.background import (
    BackgroundRemovalParams,
    FillParams,
    MakeTransparentParams,
    QualityParams,
)
from pixelmill.engines.colorize import ColorizeParams
from pixelmill.engines.convert import ConvertParams
from pixelmill.engines.deblur import UnblurParams
from pixelmill.engines.edit import EditParams
from pixelmill.engines.enhance import EnhanceParams
from pixelmill.engines.prompt import ImageToPromptParams
from pixelmill.engines.replace_background import ReplaceBackgroundParams
from pixelmill.engines.style import StyleParams
from pixelmill.engines.text_removal import TextRemovalParams
from pixelmill.engines.upscale import UpscaleParams
from pixelmill.errors import InvalidInput
from pixelmill.operations.inputs import ImageSource
from pixelmill.operations.pipeline import Outcome
from pixelmill.operations.schemas import AnalyzeResult, PromptResult, V2Result

router = APIRouter(prefix="/api/v2", tags=["v2 processing"])

_IMAGE_FIELDS = {"image_url", "image_base64", "output_format"}


class ImageInput(BaseModel):
    image_url: str | None = Field(None, description="public http(s) URL of a JPEG, PNG or WebP")
    image_base64: str | None = Field(
        None,
        description="the image as standard base64 (a data: URI is accepted); wins over image_url",
    )

    def source(self) -> ImageSource:
        return ImageSource.choose(self.image_base64, self.image_url)

    def params(self) -> dict[str, Any]:
        # Only what the caller sent: the engine fills its own defaults, and can tell a value
        # given on purpose from a default (an explicit parameter overrides a preset).
        return self.model_dump(exclude=_IMAGE_FIELDS | _REFERENCE_FIELDS, exclude_unset=True)


_REFERENCE_FIELDS = {"reference_image_url", "reference_image_base64"}


class AlphaOutput(BaseModel):
    output_format: Literal["png", "webp"] | None = Field(
        None, description="the older name of format (png or webp); both, differing, is a 422"
    )


class RemoveBackgroundRequest(ImageInput, AlphaOutput, BackgroundRemovalParams):
    pass


class MakeTransparentRequest(ImageInput, AlphaOutput, MakeTransparentParams):
    pass


class UpscaleRequest(ImageInput, UpscaleParams):
    pass


class RemoveTextRequest(ImageInput, TextRemovalParams):
    pass


class ConvertRequest(ImageInput, ConvertParams):
    pass


class EnhanceRequest(ImageInput, EnhanceParams):
    pass


class UnblurRequest(ImageInput, UnblurParams):
    pass


class ColorizeRequest(ImageInput, ColorizeParams):
    reference_image_url: str | None = Field(
        None, description="a colour photo whose colours are transferred (optional)"
    )
    reference_image_base64: str | None = None


class StyleTransferRequest(ImageInput, StyleParams):
    pass


class AnalyzeRequest(ImageInput, AnalyzeParams):
    pass


class ImageToPromptRequest(ImageInput, ImageToPromptParams):
    pass


class EditRequest(ImageInput, EditParams):
    pass


class ReplaceBackgroundRequest(ImageInput, ReplaceBackgroundParams):
    pass


async def _run(
    operation: str,
    body: ImageInput,
    user: ApiKeyUser,
    resources: Res,
    base_url: str,
    *,
    extra_inputs: dict[str, ImageSource] | None = None,
) -> Outcome:
    fmt = getattr(body, "output_format", None)
    quality = 95
    params = body.params()
    if isinstance(body, ConvertRequest):
        fmt = "jpeg" if body.format in ("jpg", "jpeg") else body.format
        quality = body.quality
    elif isinstance(body, QualityParams):
        # The engine chooses the format from its own `format` parameter (one mechanism: the
        # output image's preferred_format); `output_format` is that parameter's older name.
        quality = body.quality
        if fmt is not None:
            if "format" in body.model_fields_set and getattr(body, "format", fmt) != fmt:
                raise InvalidInput("output_format and format disagree: send format only")
            params.setdefault("format", fmt)
            fmt = None
    if isinstance(body, FillParams) and (body.bg_image_base64 or body.bg_image_url):
        extra_inputs = {
            **(extra_inputs or {}),
            "background": ImageSource.choose(body.bg_image_base64, body.bg_image_url),
        }
    return await resources.pipeline.run(
        operation,
        body.source(),
        params,
        user=user,
        surface="v2",
        base_url=base_url,
        output_format=fmt,
        quality=quality,
        extra_inputs=extra_inputs,
    )


@router.post("/remove-background")
async def remove_background(
    body: RemoveBackgroundRequest, user: ApiKeyUser, resources: Res, base_url: BaseUrl
) -> V2Result:
    """Cut out the subject: a PNG with a transparent background by default. remove.bg's
    output controls (type, crop, size, scale, position, bg_color / bg_image, shadow, channels,
    format, presets for Amazon, Shopify and Etsy) lay it out for a listing in the same call;
    a combination that cannot be honoured is a 422 that costs nothing. 1 credit."""
    return V2Result.from_outcome(await _run("background_removal", body, user, resources, base_url))


@router.post("/make-transparent")
async def make_transparent(
    body: MakeTransparentRequest, user: ApiKeyUser, resources: Res, base_url: BaseUrl
) -> V2Result:
    """Make the background transparent (colour key on plain backgrounds, else the subject
    mask); PNG with alpha. Takes the cut-out controls that keep it transparent (crop, size,
    scale, position, shadow, channels, format). 1 credit."""
    return V2Result.from_outcome(await _run("make_transparent", body, user, resources, base_url))


@router.post("/upscale")
async def upscale(
    body: UpscaleRequest, user: ApiKeyUser, resources: Res, base_url: BaseUrl
) -> V2Result:
    """Upscale 2x, 4x (1 credit) or 8x (2 credits); exactly scale × the input size.
    ``details.method`` names the method each quality level used."""
    return V2Result.from_outcome(await _run("upscale", body, user, resources, base_url))


@router.post("/remove-text")
async def remove_text(
    body: RemoveTextRequest, user: ApiKeyUser, resources: Res, base_url: BaseUrl
) -> V2Result:
    """Remove text, watermarks and logos with the learned overlay remover (the default;
    `method: ocr` finds text with OCR instead and fills its strokes). 1 credit."""
    return V2Result.from_outcome(await _run("text_removal", body, user, resources, base_url))


@router.post("/convert")
async def convert(
    body: ConvertRequest, user: ApiKeyUser, resources: Res, base_url: BaseUrl
) -> V2Result:
    """Convert to PNG, JPG or WebP (alpha flattened onto white for JPG). 1 credit."""
    return V2Result.from_outcome(await _run("convert", body, user, resources, base_url))


@router.post("/enhance")
async def enhance(
    body: EnhanceRequest, user: ApiKeyUser, resources: Res, base_url: BaseUrl
) -> V2Result:
    """Run several enhancement methods in parallel and return the best by a no-reference
    quality score; ``details.variants[]`` lists every variant with its ``url`` and score.
    1 credit."""
    return V2Result.from_outcome(await _run("enhance", body, user, resources, base_url))


@router.post("/unblur")
async def unblur(
    body: UnblurRequest, user: ApiKeyUser, resources: Res, base_url: BaseUrl
) -> V2Result:
    """Deblur: estimate the blur (none, Gaussian or motion) and undo it by TV deconvolution;
    a photo with no blur that a kernel explains comes back unchanged. 1 credit."""
    return V2Result.from_outcome(await _run("unblur", body, user, resources, base_url))


@router.post("/colorize")
async def colorize(
    body: ColorizeRequest, user: ApiKeyUser, resources: Res, base_url: BaseUrl
) -> V2Result:
    """Colorize a black-and-white photo from a reference photo, a palette, or built-in
    palettes (classical colour transfer, not a learned colourizer). 1 credit."""
    extra: dict[str, ImageSource] = {}
    if body.reference_image_base64 or body.reference_image_url:
        extra["reference"] = ImageSource.choose(
            body.reference_image_base64, body.reference_image_url
        )
    return V2Result.from_outcome(
        await _run("colorize", body, user, resources, base_url, extra_inputs=extra)
    )


@router.post("/style-transfer")
async def style_transfer(
    body: StyleTransferRequest, user: ApiKeyUser, resources: Res, base_url: BaseUrl
) -> V2Result:
    """Apply one of eight looks: cinematic, anime, oil_painting, watercolor, sketch, pop_art,
    cyberpunk, vintage. 1 credit."""
    return V2Result.from_outcome(await _run("style_transfer", body, user, resources, base_url))


@router.post("/analyze")
async def analyze(
    body: AnalyzeRequest, user: ApiKeyUser, resources: Res, base_url: BaseUrl
) -> AnalyzeResult:
    """Objects we can detect, colours, mood, quality, composition, text, categories,
    description and SEO alt text. 1 credit."""
    return AnalyzeResult.from_outcome(await _run("analyze", body, user, resources, base_url))


@router.post("/image-to-prompt")
async def image_to_prompt(
    body: ImageToPromptRequest, user: ApiKeyUser, resources: Res, base_url: BaseUrl
) -> PromptResult:
    """Prompts for general use, FLUX, Midjourney and Stable Diffusion (positive/negative),
    built from the image's analysed facts. 1 credit."""
    return PromptResult.from_outcome(await _run("image_to_prompt", body, user, resources, base_url))


@router.post("/edit")
async def edit(body: EditRequest, user: ApiKeyUser, resources: Res, base_url: BaseUrl) -> V2Result:
    """Prompt-driven edit; ``details.interpreted_as`` lists the edits applied. A prompt with
    nothing recognisable is a 422 and costs nothing. 2 credits."""
    return V2Result.from_outcome(await _run("edit", body, user, resources, base_url))


@router.post("/image-to-image")
async def image_to_image(
    body: EditRequest, user: ApiKeyUser, resources: Res, base_url: BaseUrl
) -> V2Result:
    """Text-prompt transformation (the prompt-edit engine). 2 credits."""
    return V2Result.from_outcome(await _run("image_to_image", body, user, resources, base_url))


@router.post("/replace-background")
async def replace_background(
    body: ReplaceBackgroundRequest, user: ApiKeyUser, resources: Res, base_url: BaseUrl
) -> V2Result:
    """Cut out the subject and composite it onto a procedurally generated background described
    by the prompt, with a contact shadow. 2 credits."""
    return V2Result.from_outcome(await _run("replace_background", body, user, resources, base_url))
