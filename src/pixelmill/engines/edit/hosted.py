"""``edit`` and ``image_to_image`` routed to an image model (OpenAI images API, Replicate,
ComfyUI): the instruction is the model's prompt, the model's image the result."""

from __future__ import annotations

from pydantic import BaseModel

from pixelmill.engines.base import EngineError
from pixelmill.engines.runtime.hosted import HostedImage


class EditHosted(HostedImage):
    providers = ("openai", "replicate", "comfyui")

    def validate(self, params: BaseModel) -> None:
        """A prompt, but not the offline edit grammar: a generative model takes any
        instruction ("add snow"). Should it fail and the offline engine run instead, an
        instruction that engine cannot follow is a 422 with the credits released."""
        if not str(getattr(params, "prompt", "") or "").strip():
            raise EngineError("a prompt is needed")
