"""Upscaling ×2, ×4, ×8: classical methods (``classical.py``) and our learned network
(``learned.py``), chosen per quality level by ``engine.py``."""

from pixelmill.engines.upscale.engine import UpscaleEngine, UpscaleParams

__all__ = ["UpscaleEngine", "UpscaleParams"]
