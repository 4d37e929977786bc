"""The ``ad_copy`` engine: an ad's headline and supporting line and a caption per platform,
from a product page's facts. Offline it fills templates (``captions.py``); routed
(``PIXELMILL_ROUTE_AD_COPY``) a language model writes them (``hosted.AdCopyHosted``), held to
the same limits. The ad pack takes its copy from here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from pixelmill.engines.base import BaseEngine, EngineInputs, EngineResult
from pixelmill.engines.product_text.captions import (
    METHOD,
    RULES,
    first_sentence,
    shorten,
    write_captions,
)

HEADLINE_LIMIT = 60
TAGLINE_LIMIT = 110


class AdCopyParams(BaseModel):
    """The page's facts the copy is written from."""

    name: str = Field(min_length=1, max_length=300)
    description: str = ""
    brand: str = ""
    price: str = ""
    category: str = "other"
    url: str = ""
    seed: int = 0


@dataclass(frozen=True)
class AdText:
    """What the ad pack uses: the ads' lines, the captions (as the captions file lists them)
    and how they were written."""

    headline: str
    tagline: str
    captions: list[dict[str, object]]
    method: str

    @classmethod
    def of(cls, result: EngineResult) -> AdText:
        d = result.details
        return cls(str(d["headline"]), str(d["tagline"]), list(d["captions"]), str(d["method"]))


class AdCopyEngine(BaseEngine[AdCopyParams]):
    name: ClassVar[str] = "ad_copy"
    Params: ClassVar[type[BaseModel]] = AdCopyParams

    def _run(self, inputs: EngineInputs, params: AdCopyParams) -> EngineResult:
        captions = write_captions(
            name=params.name,
            description=params.description,
            brand=params.brand,
            price=params.price,
            category=params.category,
            url=params.url,
            seed=params.seed,
        )
        tagline = first_sentence(params.description) if params.description else ""
        details: dict[str, Any] = {
            "method": METHOD,
            "headline": shorten(params.name, HEADLINE_LIMIT),
            "tagline": shorten(tagline, TAGLINE_LIMIT),
            "captions": [c.as_dict() for c in captions],
            "limits": {rule.platform: rule.limit for rule in RULES},
        }
        return EngineResult([], details)
