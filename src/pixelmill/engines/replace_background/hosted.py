"""``replace_background`` routed to an image model: the prompt asks for the new background
around the kept subject; the OpenAI images API and ComfyUI (``{{mask}}``) also get a mask made
from the offline subject matte, opaque where the subject stays."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image
from pydantic import BaseModel

from pixelmill.engines.background import subject_matte
from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.hosted import HostedImage


class ReplaceBackgroundHosted(HostedImage):
    providers = ("openai", "replicate", "comfyui")

    def _prompt(self, params: BaseModel) -> str | None:
        prompt = super()._prompt(params)
        if prompt is None:
            return None
        return (
            f"Replace the background with: {prompt}. Keep the subject exactly as it is, with "
            "natural light and shadows matching the new background."
        )

    def _mask(self, image: ImageArray, params: BaseModel) -> bytes | None:
        """Opaque where the subject stays, transparent where the background is replaced."""
        matte = subject_matte(image, str(getattr(params, "type", "auto")))  # type: ignore[arg-type]
        alpha = np.clip(matte.alpha * 255.0 + 0.5, 0, 255).astype(np.uint8)
        rgba = np.dstack([image[..., :3], alpha])
        buffer = io.BytesIO()
        Image.fromarray(rgba, "RGBA").save(buffer, format="PNG")
        return buffer.getvalue()
