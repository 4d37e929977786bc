"""Text and watermark removal: OCR-detected text regions, a stroke mask, inpainting."""

from pixelmill.engines.text_removal.engine import TextRemovalEngine, TextRemovalParams

__all__ = ["TextRemovalEngine", "TextRemovalParams"]
