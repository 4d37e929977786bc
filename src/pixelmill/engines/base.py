"""The engine protocol and the value types engines exchange with the operation pipeline.

Images cross this boundary as numpy arrays: ``uint8``, shape ``(H, W, 3)`` (RGB) or ``(H, W, 4)``
(RGBA). Decoding, validation, EXIF orientation and encoding are the pipeline's job
(``pixelmill.imaging``); an engine never sees bytes, files, URLs or HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel

ImageArray = npt.NDArray[np.uint8]
"""An RGB ``(H, W, 3)`` or RGBA ``(H, W, 4)`` uint8 image."""


class EngineError(Exception):
    """The engine could not produce a result for this input (not a bug: e.g. no text found to
    remove is *not* an error, but an input the method cannot handle is). The pipeline turns it
    into a 4xx/422 for the caller and releases the reserved credits."""


@dataclass(frozen=True)
class EngineInputs:
    """What an engine is given: the main image and, for some engines, named extra images
    (for example a colour reference for colorize)."""

    image: ImageArray
    extra: dict[str, ImageArray] = field(default_factory=dict)


@dataclass(frozen=True)
class OutputImage:
    """One image an engine produced. ``label`` names it when an engine returns several
    (enhance variants, scene names). ``preferred_format`` is a hint (``png`` when the alpha
    channel matters); the caller's requested output format wins."""

    pixels: ImageArray
    label: str = "result"
    preferred_format: str | None = None
    score: float | None = None


@dataclass(frozen=True)
class EngineResult:
    """Images and JSON-serialisable facts. ``details`` always carries ``method``: a short,
    honest description of what was done (it is shown to API users)."""

    images: list[OutputImage]
    details: dict[str, Any]

    @property
    def primary(self) -> OutputImage | None:
        return self.images[0] if self.images else None


class Engine(Protocol):
    """A capability. ``load`` is idempotent and thread-safe (models load once per process);
    ``run`` is pure and may be called from several threads at once."""

    name: ClassVar[str]
    Params: ClassVar[type[BaseModel]]

    def load(self) -> None: ...

    def run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult: ...
