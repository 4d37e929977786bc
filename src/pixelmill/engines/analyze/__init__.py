"""Image analysis: what can honestly be found in a photo without a named-object model."""

from pixelmill.engines.analyze.analysis import analyze_image, guess_product_category, load_models
from pixelmill.engines.analyze.engine import AnalyzeEngine, AnalyzeParams

__all__ = [
    "AnalyzeEngine",
    "AnalyzeParams",
    "analyze_image",
    "guess_product_category",
    "load_models",
]
