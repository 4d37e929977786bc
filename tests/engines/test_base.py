"""Tests for the engine base class and the registry: one locked load per engine, parameters
checked once, a declared ``validate`` on every registered engine."""

from __future__ import annotations

import threading
from typing import ClassVar

import numpy as np
import pytest
from pydantic import BaseModel

from pixelmill.engines.base import (
    BaseEngine,
    Engine,
    EngineError,
    EngineInputs,
    EngineResult,
    OutputImage,
)
from pixelmill.engines.convert import ConvertParams
from pixelmill.engines.edit import EditEngine, EditParams
from pixelmill.engines.registry import build_engines


class CountingParams(BaseModel):
    limit: int = 3


class CountingEngine(BaseEngine[CountingParams]):
    """A tiny real engine that counts how often its model was loaded."""

    name: ClassVar[str] = "counting"
    Params: ClassVar[type[BaseModel]] = CountingParams

    def __init__(self) -> None:
        super().__init__()
        self.loads = 0

    def _load(self) -> None:
        self.loads += 1

    def _validate(self, params: CountingParams) -> None:
        if params.limit > 5:
            raise EngineError("limit too high")

    def _run(self, inputs: EngineInputs, params: CountingParams) -> EngineResult:
        return EngineResult([OutputImage(inputs.image)], {"method": "copy", "limit": params.limit})


def test_load_runs_once_across_threads_and_run_loads_first() -> None:
    engine = CountingEngine()
    barrier = threading.Barrier(6)

    def load() -> None:
        barrier.wait()
        engine.load()

    threads = [threading.Thread(target=load) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert engine.loads == 1

    fresh = CountingEngine()
    result = fresh.run(EngineInputs(np.zeros((4, 4, 3), np.uint8)), CountingParams(limit=2))
    assert fresh.loads == 1
    assert result.details == {"method": "copy", "limit": 2}


def test_run_and_validate_check_the_params_model() -> None:
    engine = CountingEngine()
    image = EngineInputs(np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(TypeError, match="counting expects CountingParams"):
        engine.run(image, ConvertParams())
    with pytest.raises(TypeError):
        engine.validate(ConvertParams())
    engine.validate(CountingParams(limit=5))
    with pytest.raises(EngineError, match="limit too high"):
        engine.validate(CountingParams(limit=6))


def test_every_registered_engine_derives_from_the_base_and_validates() -> None:
    engines: dict[str, Engine] = build_engines()
    for name, engine in engines.items():
        assert isinstance(engine, BaseEngine), name
        assert engine.name == name
        if name != "edit":
            # Declared on every engine; a no-op unless the engine checks more than its model.
            engine.validate(engine.Params.model_validate(default_params(name)))


def default_params(name: str) -> dict[str, object]:
    required: dict[str, dict[str, object]] = {
        "style_transfer": {"style": "vintage"},
        "replace_background": {"prompt": "marble"},
        "tryon": {"category": "clothing"},  # try-on validates that it is a garment
        "product_text": {"title": "Stoneware mug"},  # copy starts from the product's title
        "ad_copy": {"name": "Trail Bottle 750 ml"},  # ad copy starts from the page's name
        "speech": {"text": "Hello."},
        "video": {"script": "Hello."},
    }
    return required.get(name, {})


def test_edit_validate_rejects_a_meaningless_prompt_before_running() -> None:
    engine = EditEngine()
    engine.validate(EditParams(prompt="make it warmer"))
    with pytest.raises(EngineError):
        engine.validate(EditParams(prompt="qwxz blorp"))


def test_params_must_be_the_model_the_engine_is_typed_with() -> None:
    with pytest.raises(TypeError, match="Params must be CountingParams"):

        class Mismatched(BaseEngine[CountingParams]):
            name: ClassVar[str] = "mismatched"
            Params: ClassVar[type[BaseModel]] = ConvertParams

            def _run(self, inputs: EngineInputs, params: CountingParams) -> EngineResult:
                raise AssertionError("never runs")


class CountingModel:
    def __init__(self) -> None:
        self.loads = 0

    def load(self) -> None:
        self.loads += 1


MODEL = CountingModel()


class DeclaredModelsEngine(BaseEngine[CountingParams]):
    name: ClassVar[str] = "declared"
    Params: ClassVar[type[BaseModel]] = CountingParams
    models = (MODEL,)

    def _run(self, inputs: EngineInputs, params: CountingParams) -> EngineResult:
        return EngineResult([], {"method": "none"})


def test_the_default_load_loads_the_declared_models_once() -> None:
    engine = DeclaredModelsEngine()
    engine.load()
    engine.run(EngineInputs(np.zeros((4, 4, 3), np.uint8)), CountingParams())
    assert MODEL.loads == 1
