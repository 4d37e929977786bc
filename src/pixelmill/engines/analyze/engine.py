"""The ``analyze`` engine: image facts as JSON, no image out (see :mod:`.analysis`)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from pixelmill.engines.analyze import analysis
from pixelmill.engines.base import BaseEngine, EngineInputs, EngineResult


class AnalyzeParams(BaseModel):
    """``analyze`` takes no options."""


class AnalyzeEngine(BaseEngine[AnalyzeParams]):
    """``analyze``: objects we can detect, palette, quality, composition, text, categories,
    mood, a description and alt text. ``details`` *is* the analysis (plus ``method``)."""

    name: ClassVar[str] = "analyze"
    Params: ClassVar[type[BaseModel]] = AnalyzeParams

    def _load(self) -> None:
        """Load the face/hand/pose graphs, the OCR models and U²-Net-p once."""
        analysis.load_models()

    def _run(self, inputs: EngineInputs, params: AnalyzeParams) -> EngineResult:
        return EngineResult(images=[], details=analysis.analyze_image(inputs.image))
