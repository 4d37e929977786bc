"""Format conversion: the pixels are kept as they are; the pipeline's encoder writes the
requested format (alpha is flattened onto white for JPEG, kept for PNG and WebP)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from pixelmill.engines.base import BaseEngine, EngineInputs, EngineResult, OutputImage


class ConvertParams(BaseModel):
    format: Literal["png", "jpg", "jpeg", "webp"] = Field(
        "png", description="target format: png, jpg (jpeg) or webp"
    )
    quality: int = Field(90, ge=1, le=100, description="JPEG/WebP quality (100 = lossless WebP)")


class ConvertEngine(BaseEngine[ConvertParams]):
    """Re-encode the image in another format; the pixels are kept as they are."""

    name: ClassVar[str] = "convert"
    Params: ClassVar[type[BaseModel]] = ConvertParams

    def _run(self, inputs: EngineInputs, params: ConvertParams) -> EngineResult:
        fmt = "jpeg" if params.format in ("jpg", "jpeg") else params.format
        has_alpha = inputs.image.shape[2] == 4
        method = f"re-encode to {fmt.upper()}"
        if fmt == "jpeg" and has_alpha:
            method += " (alpha composited onto white: JPEG has no transparency)"
        return EngineResult(
            images=[OutputImage(inputs.image, "result", preferred_format=fmt)],
            details={"method": method, "format": fmt, "quality": params.quality},
        )
