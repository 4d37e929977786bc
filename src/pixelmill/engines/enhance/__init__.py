"""Photo enhancement: classical restorations ranked by a no-reference quality score."""

from pixelmill.engines.enhance.engine import EnhanceEngine, EnhanceParams

__all__ = ["EnhanceEngine", "EnhanceParams"]
