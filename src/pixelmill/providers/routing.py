"""Routing by setting: ``PIXELMILL_ROUTE_<OPERATION>=<provider>:<model or workflow>`` puts a
provider-backed engine in front of the operation's offline engine. With no route the registry is
returned as it is, so a server without provider settings behaves exactly as before.

Routed engines are registered under the *operation's* name (``image_to_image`` shares the
``edit`` engine offline but may be routed on its own); ``operations.params.engine_for`` looks
the operation's name up first.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

import httpx

from pixelmill.config import Settings
from pixelmill.engines.base import Engine
from pixelmill.jobs.cancel import CancelToken
from pixelmill.operations.catalog import CATALOG
from pixelmill.providers.comfyui import ComfyUIProvider, placeholders
from pixelmill.providers.engines import Backends, Route, bind, engine_kind
from pixelmill.providers.http import HttpPolicy
from pixelmill.providers.openai import OpenAIProvider
from pixelmill.providers.replicate import ReplicateProvider, parse_model
from pixelmill.providers.video import VIDEO_ROUTE, RoutedVideo, parse_input_template

PROVIDERS = ("openai", "replicate", "comfyui")

JOB_ROUTES: dict[str, tuple[str, ...]] = {VIDEO_ROUTE: ("replicate",)}
"""Routes that are not catalog operations: the video job's render (``providers.video``)."""


def parse_route(operation: str, spec: str) -> Route:
    """``"openai:gpt-4o-mini"`` -> ``Route("analyze", "openai", "gpt-4o-mini")``; the model
    part may itself hold colons (``replicate:owner/model:version``)."""
    op = operation.strip().lower().replace("-", "_")
    setting = f"PIXELMILL_ROUTE_{op.upper()}"
    if op not in CATALOG and op not in JOB_ROUTES:
        raise ValueError(f"{setting}: there is no operation named {op}")
    provider, sep, model = spec.strip().partition(":")
    provider = provider.strip().lower()
    if not sep or provider not in PROVIDERS or not model.strip():
        raise ValueError(
            f"{setting} must be <provider>:<model or workflow> with provider one of "
            f"{', '.join(PROVIDERS)}; got {spec!r}"
        )
    route = Route(op, provider, model.strip())
    if op in JOB_ROUTES:
        if provider not in JOB_ROUTES[op]:
            raise ValueError(
                f"{setting}: {op} can be routed to {', '.join(JOB_ROUTES[op])}, not {provider}"
            )
    else:
        engine_kind(route)  # refuses an operation the provider cannot run
    if provider == "replicate":
        try:
            parse_model(route.model)
        except ValueError as exc:
            raise ValueError(f"{setting}: {exc}") from None
    return route


def routes_from(settings: Settings) -> list[Route]:
    return [parse_route(op, spec) for op, spec in sorted(settings.routes.items())]


def policy_from(settings: Settings) -> HttpPolicy:
    return HttpPolicy(
        timeout=settings.provider_timeout_seconds,
        connect_timeout=min(10.0, settings.provider_timeout_seconds),
        max_attempts=settings.provider_max_attempts,
        concurrency=settings.provider_concurrency,
    )


def build_backends(settings: Settings, transport: httpx.BaseTransport | None = None) -> Backends:
    """The provider clients the settings allow (built on first use)."""
    policy = policy_from(settings)
    return Backends(
        openai=partial(
            OpenAIProvider,
            settings.openai_base_url,
            settings.openai_api_key,
            policy,
            transport,
        ),
        replicate=(
            partial(
                ReplicateProvider,
                settings.replicate_base_url,
                settings.replicate_api_token,
                policy,
                transport,
            )
            if settings.replicate_api_token
            else None
        ),
        comfyui=(
            partial(
                ComfyUIProvider, settings.comfyui_url, settings.comfyui_workflows, policy, transport
            )
            if settings.comfyui_url
            else None
        ),
        max_pixels=settings.max_image_pixels,
        cancel=CancelToken(),
    )


def _check(route: Route, settings: Settings, backends: Backends) -> None:
    """Refuse, at startup, a route whose provider is not configured or whose workflow is
    missing (rather than failing on the first request)."""
    setting = f"PIXELMILL_ROUTE_{route.operation.upper()}"
    if route.provider == "replicate" and backends.replicate is None:
        raise ValueError(f"{setting} routes to replicate: set PIXELMILL_REPLICATE_API_TOKEN")
    if route.provider == "comfyui":
        if backends.comfyui is None:
            raise ValueError(f"{setting} routes to comfyui: set PIXELMILL_COMFYUI_URL")
        try:
            template = backends.get_comfyui().workflow(route.model)
        except ValueError as exc:
            raise ValueError(f"{setting}: {exc}") from None
        if "image" not in placeholders(template) and route.operation != "tryon":
            raise ValueError(f"{setting}: workflow {route.model} has no {{{{image}}}} input")


def route_engines(
    engines: Mapping[str, Engine],
    settings: Settings,
    transport: httpx.BaseTransport | None = None,
) -> tuple[dict[str, Engine], Backends | None]:
    """The registry with every configured route in front of its offline engine, and the
    provider backends (``None`` when nothing is routed: the registry is unchanged)."""
    routes = routes_from(settings)
    if not routes:
        return dict(engines), None
    backends = build_backends(settings, transport)
    routed = dict(engines)
    for route in routes:
        _check(route, settings, backends)
        if route.operation == VIDEO_ROUTE:
            backends.video = RoutedVideo(
                route,
                backends,
                settings.provider_fallback,
                parse_input_template(settings.video_input),
            )
            continue
        inner = engines.get(CATALOG[route.operation].engine)
        if inner is None:
            raise ValueError(f"{route.operation} has no offline engine on this server")
        routed[route.operation] = bind(
            engine_kind(route), inner, route, backends, settings.provider_fallback
        )
    return routed, backends
