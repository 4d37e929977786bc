"""The ``ad`` engine: a platform ad from a product photo.

The product is cut out (its own alpha when it has one, otherwise the U²-Net-p salient mask,
through the runtime's :func:`~pixelmill.engines.runtime.layers.prepare_cutout`) and laid
out with real type on the platform's exact canvas (``layout.py``). No generative model: the
layout, backgrounds and colours are rules; what is claimed in ``details.method`` is what ran.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, field_validator

from pixelmill.engines.ads.layout import STYLE_NAMES, AdCopy, AdRender, render_ad
from pixelmill.engines.ads.platforms import PLATFORMS
from pixelmill.engines.base import BaseEngine, EngineInputs, EngineResult, ImageArray, OutputImage
from pixelmill.engines.runtime.fonts import check_fonts
from pixelmill.engines.runtime.layers import prepare_cutout
from pixelmill.engines.runtime.segmentation import U2NETP

PlatformName = Literal[
    "instagram-square",
    "instagram-story",
    "facebook-feed",
    "facebook-square",
    "twitter",
    "linkedin",
    "pinterest",
    "tiktok",
]
StyleName = Literal["minimal", "bold", "elegant", "vibrant", "dark"]

METHOD = (
    "product cut out ({cutout}) and laid out by rules on the platform's {w}x{h} canvas "
    "({arrangement} arrangement, {style} style); DejaVu type auto-sized and wrapped to fit; "
    "every text block's colour checked for WCAG contrast against the pixels behind it "
    "(lowest {contrast}:1{panel}); no generative model"
)


def _clean(value: str) -> str:
    """Control characters out, whitespace collapsed."""
    return " ".join("".join(ch if ch.isprintable() else " " for ch in value).split())


class AdParams(BaseModel):
    """Options for a platform ad."""

    platform: PlatformName = Field(
        "instagram-square",
        description="where the ad runs, which sets its exact size: "
        + ", ".join(f"{p.name} {p.width}x{p.height}" for p in PLATFORMS.values()),
    )
    style: StyleName = Field("minimal", description="look: " + ", ".join(STYLE_NAMES))
    headline: str = Field("", max_length=120, description="the large line (optional)")
    tagline: str = Field("", max_length=240, description="the supporting line (optional)")
    cta: str = Field("Shop now", max_length=28, description="button text; empty for none")
    price: str = Field("", max_length=16, description="a price badge, e.g. $49 (optional)")

    @field_validator("headline", "tagline", "cta", "price")
    @classmethod
    def _tidy(cls, value: str) -> str:
        return _clean(value)

    def copy_(self) -> AdCopy:
        return AdCopy(self.headline, self.tagline, self.cta, self.price)


def cut_out(image: ImageArray) -> tuple[ImageArray, str]:
    """The product as an RGBA cut-out and how it was obtained (raises ``EngineError`` when
    no product is found). Load :data:`U2NETP` first (the engine's ``load``)."""
    return prepare_cutout(image)


def ad_details(params: AdParams, render: AdRender, how: str) -> dict[str, Any]:
    platform = PLATFORMS[params.platform]
    lowest = min((b.contrast for b in render.blocks), default=21.0)
    backed = [b.role for b in render.blocks if b.backing != "none"]
    return {
        "method": METHOD.format(
            cutout=how,
            w=platform.width,
            h=platform.height,
            arrangement=render.arrangement,
            style=params.style,
            contrast=f"{lowest:.1f}",
            panel=f"; panel behind {', '.join(backed)}" if backed else "",
        ),
        "platform": platform.name,
        "platform_note": platform.note,
        "style": params.style,
        "width": platform.width,
        "height": platform.height,
        "min_contrast": round(lowest, 2),
        "text_blocks": [b.as_dict() for b in render.blocks],
        "accent": "#{:02x}{:02x}{:02x}".format(*render.accent),
    }


class AdEngine(BaseEngine[AdParams]):
    name: ClassVar[str] = "ad"
    Params: ClassVar[type[BaseModel]] = AdParams
    models = (U2NETP,)

    def _load(self) -> None:
        check_fonts()
        super()._load()

    def _run(self, inputs: EngineInputs, params: AdParams) -> EngineResult:
        cutout, how = cut_out(inputs.image)
        render = render_ad(cutout, PLATFORMS[params.platform], params.style, params.copy_())
        details = ad_details(params, render, how)
        return EngineResult([OutputImage(render.pixels, label=params.platform)], details)
