"""Catalog silhouette ("silo") shots: the product alone on white or a neutral, consistent
margins, with shadow variants."""

from pixelmill.engines.silo.engine import SiloEngine, SiloParams

__all__ = ["SiloEngine", "SiloParams"]
