"""The ASGI application: ``create_app(settings)`` wires middleware, error renderers, routers and
the OpenAPI 3.0.3 document."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pixelmill import __version__
from pixelmill.api.strict import refuse_unknown_fields
from pixelmill.config import Settings
from pixelmill.credits.headers import open_note
from pixelmill.errors import AppError
from pixelmill.observability.http import RequestContextMiddleware
from pixelmill.observability.metrics import (
    QueueDepthCollector,
    exposition,
    start_process_sampler,
    token_matches,
)
from pixelmill.openapi import document_error_bodies, to_openapi_303
from pixelmill.operations.admission import RefuseWhenFull
from pixelmill.readiness import check_readiness
from pixelmill.resources import Resources, build_resources
from pixelmill.worker import wire

log = logging.getLogger("pixelmill")

OPENAPI_URL = "/.well-known/openapi.json"
DOCS_ASSETS_URL = "/docs/assets"
INTERFACE_VERSION = "2.0.0"
"""The interface this server implements (the OpenAPI document's ``info.version``)."""


class RateLimitHeadersMiddleware:
    """Copies the X-RateLimit-* headers an auth dependency computed, and the credit headers of
    a charged call (``credits/headers.py``), onto the response.

    Plain ASGI (not BaseHTTPMiddleware) so it costs next to nothing per request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state: dict[str, Any] = scope.setdefault("state", {})
        credits = open_note()

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = {**(state.get("ratelimit_headers") or {}), **credits}
                if extra:
                    headers = list(message.get("headers", []))
                    present = {k.lower() for k, _ in headers}
                    for name, value in extra.items():
                        if name.lower().encode() not in present:
                            headers.append((name.lower().encode(), value.encode()))
                    message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BodySizeLimitMiddleware:
    """Refuses request bodies above a ceiling with 413 before they are read into memory."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared < 0 or declared > self.max_bytes:
                    detail = (
                        f"Request body too large: the limit is {self.max_bytes // (1024 * 1024)} MB"
                        if declared > 0
                        else "Invalid Content-Length"
                    )
                    response = JSONResponse(
                        {"detail": detail}, status_code=413 if declared > 0 else 400
                    )
                    await response(scope, receive, send)
                    return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    # A chunked body that outgrew the limit: stop reading; the app sees a
                    # disconnect and the client gets no half-processed result.
                    return {"type": "http.disconnect"}
            return message

        await self.app(scope, limited_receive, send)


def _process_failure_body(exc: AppError) -> dict[str, Any]:
    """The failure body of ``POST /api/process`` (spec), plus ``detail`` for generic clients."""
    return {
        "success": False,
        "error": exc.message,
        "error_code": exc.code,
        "details": exc.details or exc.message,
        "detail": exc.message,
    }


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AppError)
    async def app_error(request: Request, exc: AppError) -> JSONResponse:
        body = (
            _process_failure_body(exc)
            if request.url.path == "/api/process"
            else {"detail": exc.message}
        )
        return JSONResponse(body, status_code=exc.status_code, headers=exc.headers or None)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        return JSONResponse(
            {"detail": detail}, status_code=exc.status_code, headers=getattr(exc, "headers", None)
        )

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if request.url.path == "/api/process":
            message = "; ".join(
                f"{'.'.join(str(p) for p in e.get('loc', []))}: {e.get('msg')}" for e in errors
            )
            return JSONResponse(
                {
                    "success": False,
                    "error": "Invalid request",
                    "error_code": "VALIDATION_ERROR",
                    "details": message,
                    "detail": message,
                },
                status_code=422,
            )
        # The framework's validation object, made JSON-safe (ctx may hold exception objects).
        safe = [
            {k: v for k, v in e.items() if k in ("type", "loc", "msg", "input")} for e in errors
        ]
        for e in safe:
            if not isinstance(e.get("input"), str | int | float | bool | type(None) | list | dict):
                e["input"] = str(e.get("input"))
            if isinstance(e.get("input"), bytes | bytearray):
                e.pop("input")
        return JSONResponse({"detail": safe}, status_code=422)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return JSONResponse({"detail": "Internal server error"}, status_code=500)


def create_app(settings: Settings | None = None, resources: Resources | None = None) -> FastAPI:
    """Build the application. Migrations are a separate step (``pixelmill migrate``; ``serve``
    runs it first on the embedded default), never done at import or app creation."""
    settings = settings or Settings()
    res = wire(resources or build_resources(settings))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Sync endpoints and dependencies run in AnyIO's thread pool. Its default of 40 threads
        # contending for SQLite and 2 cores measured slower than a small pool
        # (bench/bench_account.py: 177 req/s at 40 threads, 238 at 8).
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.sync_threads
        if settings.metrics:
            start_process_sampler()
        res.start()
        try:
            yield
        finally:
            if resources is None:
                res.close()
            else:
                res.maintenance.stop()

    # /docs (Swagger UI) and /redoc (ReDoc) from a packaged copy of their assets (served under
    # DOCS_ASSETS_URL), so both work with no network; no validator badge, which would call an
    # outside host. info.version is the interface's; the server's own is in the description.
    app = FastAPIOffline(
        title="pixelmill",
        version=INTERFACE_VERSION,
        description="Self-hostable, credit-billed HTTP API for AI image work "
        f"(pixelmill {__version__}, interface version {INTERFACE_VERSION}).",
        openapi_url=OPENAPI_URL,
        docs_url="/docs",
        redoc_url="/redoc",
        static_url=DOCS_ASSETS_URL,
        swagger_ui_parameters={"validatorUrl": None},
        lifespan=lifespan,
        # Unknown body fields are a 422 before any endpoint runs (api/strict.py).
        dependencies=[Depends(refuse_unknown_fields)],
    )
    app.state.resources = res
    app.add_middleware(RateLimitHeadersMiddleware)
    app.add_middleware(BodySizeLimitMiddleware, max_bytes=_body_limit(settings))
    _install_error_handlers(app)

    from pixelmill.api import files, free_tools, process, v1
    from pixelmill.api.app_surface import ads as app_ads
    from pixelmill.api.app_surface import auth, avatars, credits, tryon
    from pixelmill.api.app_surface import catalog as app_catalog
    from pixelmill.api.app_surface import marketing as app_marketing
    from pixelmill.api.v2 import account, adpack, processing
    from pixelmill.api.v2 import batches as v2_batches
    from pixelmill.api.v2 import billing as v2_billing
    from pixelmill.api.v2 import generation as v2_generation
    from pixelmill.api.v2 import jobs as v2_jobs
    from pixelmill.api.v2 import library as v2_library
    from pixelmill.api.v2 import marketing as v2_marketing
    from pixelmill.api.v2 import shopify as v2_shopify
    from pixelmill.api.v2 import webhooks as v2_webhooks

    # Routing tries the included routers in this order, each route's pattern in turn (about
    # 10 us a router): the account's reads (the front door every client calls first, and
    # bench/bench_account.py's route) come first; no other router's paths overlap theirs.
    for router in (
        account.router,
        auth.router,
        credits.router,
        tryon.router,
        app_marketing.router,
        app_ads.router,
        avatars.router,
        app_catalog.router,
        process.router,
        v1.router,
        processing.router,
        v2_library.router,
        v2_library.files_router,
        v2_generation.router,
        v2_marketing.router,
        adpack.router,
        v2_jobs.router,
        v2_batches.router,
        v2_webhooks.router,
        v2_billing.router,
        v2_shopify.router,
        free_tools.router,
        files.router,
    ):
        app.include_router(router)

    # A burst beyond this process's queue for CPU work is refused before its body is parsed.
    app.add_middleware(
        RefuseWhenFull,
        admission=res.pipeline.admission,
        paths={
            route.path
            for router in (v1.router, processing.router, process.router, free_tools.router)
            for route in router.routes
            if isinstance(route, APIRoute) and "POST" in (route.methods or ())
        },
    )

    # Outermost: every answer (a refusal above included) carries X-Request-ID and is counted.
    app.add_middleware(RequestContextMiddleware, access_log=settings.log_format == "json")

    # The web dashboard at /app (static; left out of the OpenAPI document).
    from pixelmill.web import routes as web

    web.mount(app)

    @app.get("/healthz", tags=["operations"])
    def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["operations"])
    def readyz() -> JSONResponse:
        """Each dependency (database, broker, rate-limit storage, object storage) checked now:
        200 `ready` (all up) or `degraded` (an optional one is down), 503 `unavailable` when a
        required one (database at the latest migration, object storage) is down."""
        readiness = check_readiness(res)
        return JSONResponse(readiness.as_json(), status_code=200 if readiness.ready else 503)

    if settings.metrics:

        @app.get("/metrics", include_in_schema=False)
        def metrics(request: Request) -> Response:
            """Prometheus metrics of every process of this server (docs/observability.md)."""
            if not token_matches(settings.metrics_token, request.headers.get("authorization")):
                return JSONResponse(
                    {"detail": "Missing or wrong metrics token"},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
            body, content_type = exposition([QueueDepthCollector(res.queue.depth)])
            return Response(body, media_type=content_type)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            doc = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            app.openapi_schema = document_error_bodies(to_openapi_303(doc))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def _body_limit(settings: Settings) -> int:
    # base64 inflates by 4/3; leave room for JSON around it.
    return int(settings.max_upload_bytes * 4 / 3) + 1024 * 1024
