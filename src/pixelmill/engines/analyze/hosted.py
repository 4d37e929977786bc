"""``analyze`` routed to a vision-language model (``PIXELMILL_ROUTE_ANALYZE=openai:...``): the
offline measurements (palette, quality, composition, text, faces) plus named objects,
description, alt text and mood from the model, whose JSON answer is validated."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from pixelmill.engines.base import EngineInputs, EngineResult
from pixelmill.engines.runtime.hosted import HostedEngine
from pixelmill.providers.http import ProviderFailure
from pixelmill.providers.media import VISION_SIDE, png_bytes
from pixelmill.providers.openai import schema_hint


class VisionAnalysis(BaseModel):
    """What a vision-language model is asked for by ``analyze``."""

    objects: list[str] = Field(min_length=1, description="the things in the picture, named")
    description: str = Field(min_length=1, description="two or three plain sentences")
    alt_text: str = Field(min_length=1, description="accessible alt text, one sentence")
    mood: str = Field(min_length=1, description="a few words")
    categories: list[str] = Field(default_factory=list, description="e.g. portrait, product")


ANALYZE_INSTRUCTIONS = (
    "You describe images for an image-processing API. Look at the image and answer with one "
    'JSON object only, matching this JSON schema: {schema}. Name concrete things ("a ginger '
    'cat", "a red sofa"), never "an object" or "a subject".'
)


class AnalyzeHosted(HostedEngine):
    """The offline analysis first, then the model's words merged into it; when the model
    fails, the offline analysis is the fallback (already made)."""

    providers = ("openai",)

    def run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        measured = self._offline(inputs, params)
        try:
            vision = self.backends.get_openai().chat_json(
                self.route.model,
                ANALYZE_INSTRUCTIONS.format(schema=schema_hint(VisionAnalysis)),
                "Analyse this image.",
                VisionAnalysis,
                image_png=png_bytes(inputs.image, VISION_SIDE),
                cancel=self.backends.token(),
            )
        except ProviderFailure as exc:
            return self._fall_back(exc, lambda: measured)
        facts = measured.details
        details: dict[str, Any] = {
            **facts,
            "objects": vision.objects,
            "measured_objects": facts.get("objects", []),
            "description": vision.description,
            "accessibility_alt_text": vision.alt_text,
            "mood": vision.mood,
            "categories": list(dict.fromkeys([*facts.get("categories", []), *vision.categories])),
            "method": (
                f"vision-language model {self.route.label} (named objects, description, alt "
                f"text, mood) + {facts.get('method', 'classical measurements')}"
            ),
            "provider": self.route.label,
        }
        return EngineResult(measured.images, details)
