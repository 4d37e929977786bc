"""An operation's parameters: the engine that runs it, and its parameters parsed into the
engine's ``Params`` model and checked by the engine's ``validate``. Both happen before any
credit is reserved, so a bad parameter is a 422 that costs nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from pixelmill.engines.base import Engine, EngineError, MultiImageEngine
from pixelmill.errors import InvalidInput, NotFound
from pixelmill.operations.catalog import Operation


def engine_for(engines: Mapping[str, Engine], op: Operation) -> Engine:
    """The engine that runs ``op``; a 404 when this server does not have it. An engine
    registered under the operation's own name (an operation routed to a provider, see
    :mod:`pixelmill.providers.routing`) comes first."""
    engine = engines.get(op.name) or engines.get(op.engine)
    if engine is None:
        raise NotFound(f"Operation {op.name} is not available on this server")
    return engine


def multi_image_engine_for(engines: Mapping[str, Engine], op: Operation) -> MultiImageEngine:
    """The engine of ``op`` when it makes several images that jobs run one by one
    (``plan()``); a 404 when missing, a ``TypeError`` (a wiring bug) when it cannot plan."""
    engine = engine_for(engines, op)
    if not callable(getattr(engine, "plan", None)):
        raise TypeError(f"operation {op.name} needs a multi-image engine, got {engine!r}")
    return cast(MultiImageEngine, engine)


def parse_params(engine: Engine, raw: Mapping[str, Any]) -> BaseModel:
    """``raw`` as the engine's ``Params``, checked by the engine; :class:`InvalidInput` (422)
    naming every bad field otherwise."""
    try:
        params = engine.Params.model_validate(dict(raw))
    except ValidationError as exc:
        msg = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()
        )
        raise InvalidInput(f"Invalid parameters: {msg}") from exc
    try:
        engine.validate(params)
    except EngineError as exc:
        raise InvalidInput(str(exc)) from exc
    return params
