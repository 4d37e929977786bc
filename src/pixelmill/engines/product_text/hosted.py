"""``product_text`` routed to a language model (``PIXELMILL_ROUTE_PRODUCT_TEXT=openai:...``):
the storefront's description, tags and alt text written by the model from the product's title,
description and tags (and its photo when there is one and ``use_image``), its JSON answer
validated against a model holding exactly the asked fields."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, Field, create_model

from pixelmill.engines.base import EngineInputs, EngineResult
from pixelmill.engines.product_text.ad_copy import HEADLINE_LIMIT, TAGLINE_LIMIT
from pixelmill.engines.product_text.captions import RULES, Caption, fit_caption
from pixelmill.engines.runtime.hosted import HostedEngine
from pixelmill.providers.media import VISION_SIDE, png_bytes
from pixelmill.providers.openai import schema_hint

PRODUCT_TEXT_INSTRUCTIONS = (
    "You write product copy for an online store. From the product's title, its current "
    "description and tags{photo}, write what is asked. Say only what the title, the "
    "description, the tags or the photo show: no invented materials, sizes, certifications or "
    "claims. Answer with one JSON object only, matching this JSON schema: {schema}."
)
"""The system message; the schema holds only the fields asked for."""

FIELD_SPECS: dict[str, tuple[Any, Any]] = {
    "description": (
        str,
        Field(
            min_length=1,
            max_length=2000,
            description="the product description for the store page, plain text, 2-5 sentences",
        ),
    ),
    "tags": (
        list[Annotated[str, Field(min_length=1, max_length=60)]],
        Field(min_length=1, max_length=50, description="search tags, lower case, no duplicates"),
    ),
    "alt_text": (
        str,
        Field(min_length=1, max_length=250, description="alt text of the product photo"),
    ),
}


def product_copy_schema(fields: list[str]) -> type[BaseModel]:
    """A Pydantic model with exactly the asked fields, each required."""
    spec: dict[str, Any] = {f: FIELD_SPECS[f] for f in fields}
    model: type[BaseModel] = create_model("ProductCopy", **spec)
    return model


def clean_tags(tags: list[str], limit: int) -> list[str]:
    """Tags stripped, without case-insensitive repeats, at most ``limit``."""
    seen: dict[str, str] = {}
    for tag in tags:
        text = " ".join(tag.split())
        if text and text.lower() not in seen:
            seen[text.lower()] = text
    return list(seen.values())[:limit]


class ProductTextHosted(HostedEngine):
    providers = ("openai",)

    def _provider_run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        fields = [str(f) for f in getattr(params, "fields", [])]
        pixels = inputs.image
        with_photo = bool(getattr(params, "use_image", True)) and min(pixels.shape[:2]) > 1
        max_tags = int(getattr(params, "max_tags", 12))
        product = {
            "title": str(getattr(params, "title", "")),
            "description": str(getattr(params, "description", "") or "")[:4000],
            "tags": [str(t) for t in getattr(params, "tags", [])][:100],
            "write": fields,
            "max_tags": max_tags,
        }
        schema = product_copy_schema(fields)
        answer = self.backends.get_openai().chat_json(
            self.route.model,
            PRODUCT_TEXT_INSTRUCTIONS.format(
                photo=" and its photo" if with_photo else "", schema=schema_hint(schema)
            ),
            "The product, as JSON: " + json.dumps(product, ensure_ascii=False),
            schema,
            image_png=png_bytes(pixels, VISION_SIDE) if with_photo else None,
            cancel=self.backends.token(),
        )
        written = answer.model_dump()
        details: dict[str, Any] = {
            "method": (
                f"language model {self.route.label} (chat completions, JSON validated) from the "
                f"product's title, description and tags{' and its photo' if with_photo else ''}"
            ),
            "provider": self.route.label,
        }
        for name in fields:
            value = written[name]
            details[name] = (
                clean_tags(value, max_tags) if name == "tags" else " ".join(str(value).split())
            )
        return EngineResult([], details)


AD_COPY_INSTRUCTIONS = (
    "You write advertising copy for an online shop's product. From the product page's facts, "
    "write a short headline, a supporting line, and one caption per social platform in that "
    "platform's voice, each with a few relevant hashtags (without the # sign in the list). "
    "Say only what the facts say: no invented materials, discounts, awards or claims. Answer "
    "with one JSON object only, matching this JSON schema: {schema}."
)


class _Caption(BaseModel):
    text: str = Field(min_length=1, max_length=3000)
    hashtags: list[Annotated[str, Field(min_length=1, max_length=40)]] = Field(max_length=30)


def ad_copy_schema() -> type[BaseModel]:
    """The answer: the ads' two lines within their limits and a caption per platform."""
    captions: dict[str, Any] = {rule.platform: (_Caption, Field()) for rule in RULES}
    caption_model: type[BaseModel] = create_model("Captions", **captions)
    model: type[BaseModel] = create_model(
        "AdCopyAnswer",
        headline=(str, Field(min_length=1, max_length=HEADLINE_LIMIT)),
        tagline=(str, Field(min_length=1, max_length=TAGLINE_LIMIT)),
        captions=(caption_model, Field()),
    )
    return model


class AdCopyHosted(HostedEngine):
    """``ad_copy`` on an OpenAI-compatible chat model: JSON validated (the headline and the
    supporting line refused when over their limits), each caption then held to its
    platform's limit with its hashtags (``fit_caption``: hashtags dropped first, then cut)."""

    providers = ("openai",)

    def _provider_run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        facts = {
            k: str(getattr(params, k, "") or "")[:4000]
            for k in ("name", "description", "brand", "price", "category", "url")
        }
        schema = ad_copy_schema()
        answer = (
            self.backends.get_openai()
            .chat_json(
                self.route.model,
                AD_COPY_INSTRUCTIONS.format(schema=schema_hint(schema)),
                "The product page, as JSON: " + json.dumps(facts, ensure_ascii=False),
                schema,
                cancel=self.backends.token(),
            )
            .model_dump()
        )
        captions = []
        for rule in RULES:
            written = answer["captions"][rule.platform]
            tags = ["#" + "".join(t.lstrip("#").split()) for t in written["hashtags"]]
            text, used = fit_caption([" ".join(written["text"].split())], tags, rule.limit)
            captions.append(Caption(rule.platform, text, used, rule.limit).as_dict())
        details: dict[str, Any] = {
            "method": (
                f"language model {self.route.label} (chat completions, JSON validated, each "
                "caption held to its platform's limit)"
            ),
            "provider": self.route.label,
            "headline": " ".join(answer["headline"].split()),
            "tagline": " ".join(answer["tagline"].split()),
            "captions": captions,
            "limits": {rule.platform: rule.limit for rule in RULES},
        }
        return EngineResult([], details)
