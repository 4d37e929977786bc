"""What a provider reports a call cost, collected for the output it made: Replicate's
``metrics.predict_time`` (seconds of compute it bills), OpenAI's ``usage`` (tokens). The hosted
engines open a :func:`collecting` scope around one output; the clients :func:`report` into it
(nothing happens outside a scope)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_SCOPE: ContextVar[dict[str, Any] | None] = ContextVar("pixelmill_provider_usage", default=None)


@contextmanager
def collecting() -> Iterator[dict[str, Any]]:
    """A scope whose provider calls report into the dict it yields."""
    usage: dict[str, Any] = {}
    token = _SCOPE.set(usage)
    try:
        yield usage
    finally:
        _SCOPE.reset(token)


def report(**facts: Any) -> None:
    """Add ``facts`` to the open scope (numbers are summed over several calls)."""
    usage = _SCOPE.get()
    if usage is None:
        return
    for key, value in facts.items():
        if value is None:
            continue
        if isinstance(value, int | float) and isinstance(usage.get(key), int | float):
            usage[key] = usage[key] + value
        else:
            usage[key] = value
