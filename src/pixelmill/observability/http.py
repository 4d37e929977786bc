"""The one middleware every request passes: its request id, its metrics and its access line.

Plain ASGI (no ``BaseHTTPMiddleware``, no per-request objects beyond a closure): it reads
``X-Request-ID`` (or makes one), echoes it on the response, and when the response ends counts
``pixelmill_http_requests_total`` and observes ``pixelmill_http_request_duration_seconds`` under
the matched route's template, never the raw path.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pixelmill.observability.logs import accept_request_id, request_id_var
from pixelmill.observability.metrics import HTTP_DURATION, HTTP_REQUESTS, UNMATCHED_ROUTE

access_log = logging.getLogger("pixelmill.access")

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""Methods counted under their own name; any other (a client may send any token) is ``OTHER``."""

ROUTE_KEY = "pixelmill.route"
"""A scope key a middleware that answers before routing sets to the template it refused under
(the admission check), so the request is not counted as unmatched."""


def route_template(scope: Scope) -> str:
    """The path template of the route that handled ``scope`` (``/api/v2/jobs/{job_id}``), the
    mount's path for a mounted app, or :data:`UNMATCHED_ROUTE`."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str):
        return path or "/"
    given = scope.get(ROUTE_KEY)
    return given if isinstance(given, str) else UNMATCHED_ROUTE


class RequestContextMiddleware:
    """Request id, metrics and (``access_log``) one log line per request."""

    def __init__(self, app: ASGIApp, *, access_log: bool = False) -> None:
        self.app = app
        self.access_log = access_log
        self._children: dict[tuple[str, str, int], tuple[Any, Any]] = {}

    def _metrics(self, route: str, method: str, status: int) -> tuple[Any, Any]:
        key = (route, method, status)
        found = self._children.get(key)
        if found is None:
            found = (
                HTTP_REQUESTS.labels(route, method, str(status)),
                HTTP_DURATION.labels(route, method),
            )
            self._children[key] = found
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        raw = None
        for name, value in scope["headers"]:
            if name == b"x-request-id":
                raw = value
                break
        request_id = accept_request_id(raw)
        header = (b"x-request-id", request_id.encode())
        token = request_id_var.set(request_id)
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            elapsed = time.perf_counter() - started
            route = route_template(scope)
            method = scope["method"] if scope["method"] in METHODS else "OTHER"
            counter, histogram = self._metrics(route, method, status)
            counter.inc()
            histogram.observe(elapsed)
            if self.access_log and access_log.isEnabledFor(logging.INFO):
                state = scope.get("state") or {}
                # makeRecord + handle: the record without the caller lookup logging.info does
                # (the access line's origin is always here).
                record = access_log.makeRecord(
                    access_log.name,
                    logging.INFO,
                    __file__,
                    0,
                    "%s %s %d",
                    (method, scope["path"], status),
                    None,
                    extra={
                        "route": route,
                        "method": method,
                        "status": status,
                        "duration_ms": round(elapsed * 1000, 2),
                        "account_id": state.get("account_id"),
                    },
                )
                access_log.handle(record)
            request_id_var.reset(token)
