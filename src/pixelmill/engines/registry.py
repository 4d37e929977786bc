"""The engine registry: engine name -> a shared instance. Engines load their models lazily on
first use (``load()`` is idempotent and locked), so building the registry is cheap."""

from __future__ import annotations

from collections.abc import Mapping

from pixelmill.engines.background.engine import BackgroundRemovalEngine, MakeTransparentEngine
from pixelmill.engines.base import Engine
from pixelmill.engines.convert.engine import ConvertEngine


def build_engines() -> dict[str, Engine]:
    engines: list[Engine] = [
        BackgroundRemovalEngine(),
        MakeTransparentEngine(),
        ConvertEngine(),
    ]
    return {e.name: e for e in engines}


def engine_names(engines: Mapping[str, Engine]) -> list[str]:
    return sorted(engines)
