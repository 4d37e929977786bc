"""Logging: plain text (the default) or one JSON object per line (``PIXELMILL_LOG_FORMAT=json``),
each record carrying the context of the request or job it belongs to.

The context lives in :mod:`contextvars`, so it follows a request through ``await`` and into the
threads ``asyncio.to_thread`` / AnyIO start for it, and a job's run on a worker. A request id
comes from the caller's ``X-Request-ID`` when it is a short token of safe characters
(:func:`accept_request_id`), else it is generated.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal, TypeVar

LogFormat = Literal["text", "json"]
T = TypeVar("T")

request_id_var: ContextVar[str | None] = ContextVar("pixelmill_request_id", default=None)
job_id_var: ContextVar[str | None] = ContextVar("pixelmill_job_id", default=None)
operation_var: ContextVar[str | None] = ContextVar("pixelmill_operation", default=None)
"""The operation whose engine is running (a provider call made inside it is counted under
it)."""

REQUEST_ID_MAX = 64
"""The longest caller-given ``X-Request-ID`` kept (a longer one is replaced by a new id)."""

_SAFE_ID = re.compile(rf"[A-Za-z0-9._:@/+=-]{{1,{REQUEST_ID_MAX}}}")

CONTEXT_FIELDS = ("request_id", "account_id", "job_id", "route", "method", "status", "duration_ms")
"""Fields a record may carry (``extra=``) beside those of the context variables."""


def accept_request_id(raw: bytes | str | None) -> str:
    """The caller's request id when it is 1-64 characters of ``[A-Za-z0-9._:@/+=-]``; otherwise
    (absent, too long, anything else: a header must not inject into logs) a new one."""
    if raw:
        text = raw.decode("latin-1") if isinstance(raw, bytes) else raw
        if _SAFE_ID.fullmatch(text):
            return text
    return uuid.uuid4().hex


@contextmanager
def job_context(job_id: str, request_id: str | None = None) -> Iterator[None]:
    """Log records inside the block carry ``job_id`` (and the request id that created the job,
    when it travelled with the task)."""
    job_token = job_id_var.set(job_id)
    request_token = request_id_var.set(request_id) if request_id else None
    try:
        yield
    finally:
        job_id_var.reset(job_token)
        if request_token is not None:
            request_id_var.reset(request_token)


def run_operation(operation: str, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` with :data:`operation_var` set to ``operation`` (for a thread pool, which
    does not carry the caller's context)."""
    token = operation_var.set(operation)
    try:
        return fn(*args)
    finally:
        operation_var.reset(token)


class ContextFilter(logging.Filter):
    """Puts the current request id and job id on every record (text and JSON alike)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            record.request_id = request_id_var.get()
        if getattr(record, "job_id", None) is None:
            record.job_id = job_id_var.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``time`` (UTC, ISO 8601, milliseconds), ``level``, ``logger``,
    ``message``, the context fields that are set, and ``exc_info`` as text when present."""

    _second = -1
    _stamp = ""

    def _time(self, record: logging.LogRecord) -> str:
        """The record's time; the part up to the second is formatted once per second (every
        JSON access line pays for this)."""
        second = int(record.created)
        if second != self._second:
            self._stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
            self._second = second
        return f"{self._stamp}.{int(record.msecs):03d}Z"

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": self._time(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = record.__dict__
        for name in CONTEXT_FIELDS:
            value = fields.get(name)
            if value is not None:
                out[name] = value
        if record.exc_info:
            out["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


class StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is when a record is emitted (not the one it was made
    with), so a replaced ``sys.stderr`` never leaves it writing to a closed file."""

    pixelmill = True

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        """The stream is always the current ``sys.stderr``."""


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

_UVICORN = ("uvicorn", "uvicorn.error", "uvicorn.access")


def configure_logging(fmt: LogFormat, level: str = "INFO") -> None:
    """Send every logger's records to one stderr handler in ``fmt`` at ``level`` (idempotent:
    the handler is replaced, never added twice). In JSON, uvicorn's loggers go through it too,
    and uvicorn's access lines are left out: :class:`~pixelmill.observability.http.
    RequestContextMiddleware` writes one per request with its route, status and duration."""
    quiet_native_startup()
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "pixelmill", False):
            root.removeHandler(handler)
    handler = StderrHandler()
    handler.addFilter(ContextFilter())
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root.addHandler(handler)
    root.setLevel(level.upper())
    if fmt == "json":
        # Fields a JSON line never shows: not gathered for each record (logging's own switches).
        logging.logThreads = False
        logging.logProcesses = False
        logging.logMultiprocessing = False
        for name in _UVICORN:
            logger = logging.getLogger(name)
            logger.handlers.clear()
            logger.propagate = True
        logging.getLogger("uvicorn.access").disabled = True


def quiet_native_startup() -> None:
    """Silence the start-up chatter of MediaPipe's native code (glog/absl: "All log messages
    before absl::InitializeLog() is called are written to STDERR", TensorFlow Lite's delegate
    line) and absl's Python logger; real errors still show."""
    os.environ.setdefault("GLOG_minloglevel", "2")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    logging.getLogger("absl").setLevel(logging.ERROR)
