"""``image_to_prompt`` routed to a vision-language model
(``PIXELMILL_ROUTE_IMAGE_TO_PROMPT=openai:...``): the four prompt variants written by the
model, its JSON answer validated."""

from __future__ import annotations

from pydantic import BaseModel, Field

from pixelmill.engines.base import EngineInputs, EngineResult
from pixelmill.engines.prompt.engine import aspect_ratio
from pixelmill.engines.runtime.hosted import HostedEngine
from pixelmill.providers.media import VISION_SIDE, png_bytes
from pixelmill.providers.openai import schema_hint


class VisionPrompts(BaseModel):
    """What a vision-language model is asked for by ``image_to_prompt``."""

    subject: str = Field(min_length=1, description="the main subject, named, a few words")
    general: str = Field(min_length=1, description="one plain descriptive sentence")
    flux: str = Field(min_length=1, description="descriptive natural language for FLUX")
    midjourney: str = Field(min_length=1, description="comma phrases, no parameters")
    stable_diffusion_positive: str = Field(min_length=1, description="comma-separated tags")
    stable_diffusion_negative: str = Field(min_length=1, description="comma-separated tags")


PROMPT_INSTRUCTIONS = (
    "You write text-to-image prompts that would recreate a given image. Answer with one JSON "
    "object only, matching this JSON schema: {schema}. Name the subject concretely."
)


class PromptHosted(HostedEngine):
    providers = ("openai",)

    def _provider_run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        answer = self.backends.get_openai().chat_json(
            self.route.model,
            PROMPT_INSTRUCTIONS.format(schema=schema_hint(VisionPrompts)),
            "Write the prompts for this image.",
            VisionPrompts,
            image_png=png_bytes(inputs.image, VISION_SIDE),
            cancel=self.backends.token(),
        )
        h, w = inputs.image.shape[:2]
        ratio = aspect_ratio(w, h)
        midjourney = answer.midjourney.strip()
        if "--ar" not in midjourney:
            midjourney = f"{midjourney} --ar {ratio}"
        prompts = {
            "general": answer.general,
            "flux": answer.flux,
            "midjourney": midjourney,
            "stable_diffusion": {
                "positive": answer.stable_diffusion_positive,
                "negative": answer.stable_diffusion_negative,
            },
        }
        return EngineResult(
            [],
            self._details(
                f"prompts written by the vision-language model {self.route.label}",
                prompts=prompts,
                analysis={"width": w, "height": h, "subject": answer.subject},
            ),
        )
