"""Background removal: salient-object masks and RGBA cut-outs."""

from pixelmill.engines.background.engine import (
    BackgroundRemovalEngine,
    BackgroundRemovalParams,
    MakeTransparentEngine,
    MakeTransparentParams,
)

__all__ = [
    "BackgroundRemovalEngine",
    "BackgroundRemovalParams",
    "MakeTransparentEngine",
    "MakeTransparentParams",
]
