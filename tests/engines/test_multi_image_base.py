"""``MultiImageBaseEngine`` owns the multi-image ``plan()`` path: the parameters are typed
(another model is a ``TypeError``), the engine is loaded once, then its ``_plan`` runs; the
``Params`` check of ``BaseEngine`` also holds for its subclasses."""

from __future__ import annotations

from functools import partial
from typing import ClassVar, NamedTuple

import numpy as np
import pytest
from pydantic import BaseModel

from pixelmill.engines.base import (
    EngineInputs,
    EngineResult,
    MultiImageBaseEngine,
    OutputImage,
    PlannedImage,
)


class CountParams(BaseModel):
    n: int = 2


class OtherParams(BaseModel):
    n: int = 2


class _Plan(NamedTuple):
    planned: list[PlannedImage]
    note: str


def _draw(i: int) -> OutputImage:
    return OutputImage(np.full((2, 2, 3), i, np.uint8), label=str(i))


class Counting(MultiImageBaseEngine[CountParams]):
    name: ClassVar[str] = "counting"
    Params: ClassVar[type[BaseModel]] = CountParams

    def __init__(self) -> None:
        super().__init__()
        self.loads = 0

    def _load(self) -> None:
        self.loads += 1

    def _plan(self, inputs: EngineInputs, params: CountParams) -> _Plan:
        planned = [PlannedImage(i, str(i), partial(_draw, i)) for i in range(params.n)]
        return _Plan(planned, "counted")

    def _run(self, inputs: EngineInputs, params: CountParams) -> EngineResult:
        planned, note = self._plan(inputs, params)
        return EngineResult([p.render() for p in planned], {"method": note})


def test_plan_types_loads_once_and_plans() -> None:
    engine = Counting()
    first = engine.plan(EngineInputs.none(), CountParams(n=3))
    second = engine.plan(EngineInputs.none(), CountParams(n=1))
    assert [p.label for p in first] == ["0", "1", "2"] and len(second) == 1
    assert engine.loads == 1
    assert first[2].render().pixels[0, 0, 0] == 2
    with pytest.raises(TypeError):
        engine.plan(EngineInputs.none(), OtherParams())


def test_subclasses_must_declare_their_params() -> None:
    with pytest.raises(TypeError):

        class Wrong(MultiImageBaseEngine[CountParams]):
            name: ClassVar[str] = "wrong"
            Params: ClassVar[type[BaseModel]] = OtherParams

            def _plan(self, inputs: EngineInputs, params: CountParams) -> _Plan:
                return _Plan([], "")

            def _run(self, inputs: EngineInputs, params: CountParams) -> EngineResult:
                return EngineResult([], {"method": ""})
