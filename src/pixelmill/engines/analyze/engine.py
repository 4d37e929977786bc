"""The ``analyze`` engine: image facts as JSON, no image out (see :mod:`.analysis`)."""

from __future__ import annotations

import threading
from typing import ClassVar

from pydantic import BaseModel

from pixelmill.engines.analyze import analysis
from pixelmill.engines.base import EngineInputs, EngineResult


class AnalyzeParams(BaseModel):
    """``analyze`` takes no options."""


class AnalyzeEngine:
    """``analyze``: objects we can detect, palette, quality, composition, text, categories,
    mood, a description and alt text. ``details`` *is* the analysis (plus ``method``)."""

    name: ClassVar[str] = "analyze"
    Params: ClassVar[type[BaseModel]] = AnalyzeParams

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loaded = False

    def load(self) -> None:
        """Load the face/hand/pose graphs, the OCR models and U²-Net-p once."""
        with self._lock:
            if not self._loaded:
                analysis.load()
                self._loaded = True

    def run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        assert isinstance(params, AnalyzeParams)
        self.load()
        return EngineResult(images=[], details=analysis.analyze_image(inputs.image))
