"""The ``product_text`` engine: a product's description, tags and alt text for a storefront,
composed offline (:mod:`.compose`) from the product's own title, description and tags and the
``analyze`` engine's measurements of its photo. It is an :class:`~pixelmill.engines.base.Engine`
like any other, so the provider routing can put a language model in front of it
(``PIXELMILL_ROUTE_PRODUCT_TEXT``) without the storefront's job changing."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, field_validator

from pixelmill.engines.analyze import analyze_image, load_models
from pixelmill.engines.base import BaseEngine, EngineInputs, EngineResult
from pixelmill.engines.product_text.compose import (
    ProductFacts,
    compose_alt_text,
    compose_description,
    compose_tags,
    facts_from_analysis,
)

TextField = Literal["description", "tags", "alt_text"]
TEXT_FIELDS: tuple[TextField, ...] = ("description", "tags", "alt_text")

METHOD = (
    "template composition from the product's own title, description and tags and the analyze "
    "engine's measurements of the photo (subject colours vs. the border colour, OCR text, "
    "people, keyword category); no language model"
)


class ProductTextParams(BaseModel):
    """Options for ``product_text``."""

    title: str = Field(..., min_length=1, max_length=255, description="the product's title")
    description: str = Field("", max_length=20000, description="the product's current copy")
    tags: list[str] = Field(default_factory=list, max_length=250)
    fields: list[TextField] = Field(
        default_factory=lambda: list(TEXT_FIELDS),
        min_length=1,
        description="what to write: description, tags, alt_text",
    )
    use_image: bool = Field(True, description="measure the photo (False: the text fields only)")
    max_tags: int = Field(12, ge=1, le=50)

    @field_validator("fields")
    @classmethod
    def _unique(cls, value: list[TextField]) -> list[TextField]:
        return list(dict.fromkeys(value))


class ProductTextEngine(BaseEngine[ProductTextParams]):
    """``product_text``: ``details`` holds each requested field (``description``: str,
    ``tags``: list of str, ``alt_text``: str), the ``facts`` they were built from and
    ``method``. No image out."""

    name: ClassVar[str] = "product_text"
    Params: ClassVar[type[BaseModel]] = ProductTextParams

    def _load(self) -> None:
        """The analysis' detectors and OCR, once (only needed when a photo is measured)."""
        load_models()

    def _run(self, inputs: EngineInputs, params: ProductTextParams) -> EngineResult:
        facts: ProductFacts | None = None
        pixels = inputs.image
        has_image = params.use_image and pixels.shape[0] > 1 and pixels.shape[1] > 1
        if has_image:
            facts = facts_from_analysis(
                analyze_image(pixels), pixels, params.title, params.description
            )
        details: dict[str, Any] = {"method": METHOD if has_image else METHOD_TEXT_ONLY}
        if "description" in params.fields:
            details["description"] = compose_description(params.title, params.description, facts)
        if "tags" in params.fields:
            details["tags"] = compose_tags(
                params.title, params.description, params.tags, facts, params.max_tags
            )
        if "alt_text" in params.fields:
            details["alt_text"] = compose_alt_text(params.title, facts)
        if facts is not None:
            details["facts"] = {
                "colours": facts.colours,
                "background": facts.background,
                "printed_text": facts.printed_text,
                "category": facts.category,
                "people": facts.people,
                "style": facts.style,
            }
        return EngineResult(images=[], details=details)


METHOD_TEXT_ONLY = (
    "template composition from the product's own title, description and tags (no photo "
    "measured); no language model"
)
