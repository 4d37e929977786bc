"""Product scenes: the ``scenes`` engine (a product cut out and placed in procedurally painted
scenes). The painted backdrops, the scene catalogue and the compositing it uses are the
runtime's (``runtime/backdrops.py``, ``runtime/scenery.py``, ``runtime/layers.py``,
``runtime/shadows.py``), shared with the other capabilities that place a subject on a canvas;
this package exports its engine and its parameters only.
"""

from pixelmill.engines.scenes.engine import ScenesEngine, ScenesParams

__all__ = ["ScenesEngine", "ScenesParams"]
