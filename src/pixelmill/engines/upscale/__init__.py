"""Upscaling ×2, ×4, ×8: classical methods (``classical.py``) chosen per quality level by
``engine.py``; a learned model can take over a quality level there."""
