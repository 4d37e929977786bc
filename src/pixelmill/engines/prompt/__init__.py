"""Image-to-prompt: generator prompts written from the image's analysis facts."""

from pixelmill.engines.prompt.engine import (
    ImageToPromptEngine,
    ImageToPromptParams,
    aspect_ratio,
    build_prompts,
)

__all__ = ["ImageToPromptEngine", "ImageToPromptParams", "aspect_ratio", "build_prompts"]
