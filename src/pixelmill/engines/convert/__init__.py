"""Format conversion (PNG, JPEG, WebP)."""

from pixelmill.engines.convert.engine import ConvertEngine, ConvertParams

__all__ = ["ConvertEngine", "ConvertParams"]
