"""OpenTelemetry traces, optional: ``pip install pixelmill[otel]`` and set the standard
``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``).

Then each process exports spans over OTLP/HTTP (JSON encoding): FastAPI's own spans for every
request, SQLAlchemy connections, outgoing httpx calls (providers, webhooks, URL fetches), Celery
publish and run, and the engine run of each operation or job output. The trace context goes
with a job to whatever runs it (a Celery message header, or the in-process queue), so a job's
spans share the trace of the request that created it. Without the endpoint, or without the
extra installed, nothing is set up and the spans below are no-ops.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace

T = TypeVar("T")

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")

log = logging.getLogger("pixelmill.tracing")
tracer = trace.get_tracer("pixelmill")
_configured = False


def wanted() -> bool:
    return any(os.environ.get(name) for name in ENDPOINT_VARIABLES)


def setup_tracing(service: str) -> bool:
    """Export this process's spans when an OTLP endpoint is set and the extra is installed
    (once per process); whether tracing is on."""
    global _configured
    if _configured:
        return True
    if not wanted():
        return False
    try:
        from opentelemetry.exporter.otlp.json.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        log.warning("OTEL_EXPORTER_OTLP_ENDPOINT is set but pixelmill[otel] is not installed")
        return False
    name = os.environ.get("OTEL_SERVICE_NAME") or service
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    _instrument_libraries()
    _configured = True
    return True


def _instrument_libraries() -> None:
    """SQLAlchemy, httpx and Celery, each when its instrumentation is installed."""
    from importlib import import_module

    for module, name in (
        ("opentelemetry.instrumentation.sqlalchemy", "SQLAlchemyInstrumentor"),
        ("opentelemetry.instrumentation.httpx", "HTTPXClientInstrumentor"),
        ("opentelemetry.instrumentation.celery", "CeleryInstrumentor"),
    ):
        try:
            instrumentor = getattr(import_module(module), name)
        except ImportError:
            continue
        # SQLAlchemy's instrumentation declares < 2.1; on 2.1 (our pin) its connection spans
        # work, its statement spans do not appear yet (docs/observability.md).
        instrumentor().instrument(skip_dep_check=True)


def current_context() -> Any:
    """The trace context here, to hand to another thread with :func:`attached`."""
    return otel_context.get_current()


@contextmanager
def attached(context: Any) -> Iterator[None]:
    """Run the block in ``context`` (a :func:`current_context` from another thread)."""
    if context is None:
        yield
        return
    token = otel_context.attach(context)
    try:
        yield
    finally:
        otel_context.detach(token)


def traced(name: str, fn: Callable[..., T], *args: Any, **attributes: str) -> T:
    """``fn(*args)`` inside a span ``name`` (a no-op span when tracing is off)."""
    with tracer.start_as_current_span(name, attributes=attributes):
        return fn(*args)
