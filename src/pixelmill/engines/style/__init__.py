"""Style transfer to eight named classical looks."""

from pixelmill.engines.style.engine import StyleParams, StyleTransferEngine, apply_style

__all__ = ["StyleParams", "StyleTransferEngine", "apply_style"]
