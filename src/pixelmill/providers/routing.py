"""Routing by setting: ``PIXELMILL_ROUTE_<OPERATION>=<provider>:<model or workflow>`` names the
provider that runs an operation; :class:`Backends` holds the provider clients those routes use.

This module knows providers, not capabilities: what a routed operation asks its provider and how
the answer maps back is that capability's ``engines/<capability>/hosted.py``, and which
operations can be routed, and where, is the engine registry's table
(``engines.registry.HOSTED``). With no route nothing here is built, so a server without provider
settings behaves exactly as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeVar

import httpx

from pixelmill.cancel import CancelToken, scoped_cancel
from pixelmill.config import Settings
from pixelmill.providers.comfyui import ComfyUIProvider, placeholders
from pixelmill.providers.http import HttpPolicy
from pixelmill.providers.openai import OpenAIProvider
from pixelmill.providers.replicate import ReplicateProvider, parse_model

PROVIDERS = ("openai", "replicate", "comfyui")

Fallback = Literal["offline", "error"]

Client = TypeVar("Client", OpenAIProvider, ReplicateProvider, ComfyUIProvider)


@dataclass(frozen=True)
class Route:
    """``PIXELMILL_ROUTE_<OPERATION>=<provider>:<model or workflow>``."""

    operation: str
    provider: str
    model: str

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def setting(self) -> str:
        return f"PIXELMILL_ROUTE_{self.operation.upper()}"


@dataclass
class Backends:
    """The clients of the providers the routes name (``None``: not named, or not configured),
    the process's cancellation token (cancelled when the server stops), the output image
    limit and the video and speech routes' own settings. The wiring hands it to the hosted engines:
    their only way to a provider."""

    openai: OpenAIProvider | None
    replicate: ReplicateProvider | None
    comfyui: ComfyUIProvider | None
    max_pixels: int
    cancel: CancelToken = field(default_factory=CancelToken)
    video_input: str | None = None
    """``PIXELMILL_VIDEO_INPUT``: the video route's prediction-input template (JSON)."""
    speech_voice: str = "alloy"
    """``PIXELMILL_SPEECH_VOICE``: the voice a routed speech engine asks for."""

    def get_openai(self) -> OpenAIProvider:
        return _configured(self.openai, "the openai provider is not configured")

    def get_replicate(self) -> ReplicateProvider:
        return _configured(self.replicate, "replicate needs PIXELMILL_REPLICATE_API_TOKEN")

    def get_comfyui(self) -> ComfyUIProvider:
        return _configured(self.comfyui, "the comfyui provider needs PIXELMILL_COMFYUI_URL")

    def token(self) -> CancelToken:
        """The cancel token of one provider call: the process's (the server stops) and the
        running job's (``cancel_scope``: the job was cancelled)."""
        return scoped_cancel(self.cancel)

    def close(self) -> None:
        """Cancel in-flight provider work (remote predictions, prompts) and close the clients."""
        self.cancel.cancel()
        for client in (self.openai, self.replicate, self.comfyui):
            if client is not None:
                client.close()


def _configured(client: Client | None, missing: str) -> Client:
    if client is None:
        raise ValueError(missing)
    return client


def parse_route(operation: str, spec: str) -> Route:
    """``"openai:gpt-4o-mini"`` -> ``Route("analyze", "openai", "gpt-4o-mini")``; the model
    part may itself hold colons (``replicate:owner/model:version``). Whether the operation
    exists and may go to that provider is the engine registry's check (``HOSTED``)."""
    op = operation.strip().lower().replace("-", "_")
    provider, sep, model = spec.strip().partition(":")
    provider = provider.strip().lower()
    route = Route(op, provider, model.strip())
    if not sep or provider not in PROVIDERS or not route.model:
        raise ValueError(
            f"{route.setting} must be <provider>:<model or workflow> with provider one of "
            f"{', '.join(PROVIDERS)}; got {spec!r}"
        )
    if provider == "replicate":
        try:
            parse_model(route.model)
        except ValueError as exc:
            raise ValueError(f"{route.setting}: {exc}") from None
    return route


def routes_from(settings: Settings, defaults: Mapping[str, str] | None = None) -> list[Route]:
    """The routes: ``defaults`` (the backend profile's) with the explicit
    ``PIXELMILL_ROUTE_<OPERATION>`` settings over them."""
    merged = {**(defaults or {}), **settings.routes}
    return [parse_route(op, spec) for op, spec in sorted(merged.items())]


def build_backends(
    settings: Settings, routes: list[Route], transport: httpx.BaseTransport | None = None
) -> Backends:
    """The clients of the providers ``routes`` name, as far as the settings allow."""
    used = {route.provider for route in routes}
    policy = HttpPolicy(
        timeout=settings.provider_timeout_seconds,
        connect_timeout=min(10.0, settings.provider_timeout_seconds),
        max_attempts=settings.provider_max_attempts,
        concurrency=settings.provider_concurrency,
    )
    openai, replicate, comfyui = None, None, None
    if "openai" in used:
        openai = OpenAIProvider(
            settings.openai_base_url, settings.openai_api_key, policy, transport
        )
    if "replicate" in used and settings.replicate_api_token:
        replicate = ReplicateProvider(
            settings.replicate_base_url, settings.replicate_api_token, policy, transport
        )
    if "comfyui" in used and settings.comfyui_url:
        comfyui = ComfyUIProvider(
            settings.comfyui_url, settings.comfyui_workflows, policy, transport
        )
    return Backends(
        openai,
        replicate,
        comfyui,
        settings.max_image_pixels,
        video_input=settings.video_input,
        speech_voice=settings.speech_voice,
    )


def check_route(route: Route, backends: Backends, workflow_inputs: frozenset[str]) -> None:
    """Refuse, at startup, a route whose provider is not configured or whose ComfyUI workflow
    is missing or lacks one of ``workflow_inputs`` (rather than failing on the first
    request)."""
    if route.provider == "replicate" and backends.replicate is None:
        raise ValueError(f"{route.setting} routes to replicate: set PIXELMILL_REPLICATE_API_TOKEN")
    if route.provider == "comfyui":
        if backends.comfyui is None:
            raise ValueError(f"{route.setting} routes to comfyui: set PIXELMILL_COMFYUI_URL")
        try:
            template = backends.get_comfyui().workflow(route.model)
        except ValueError as exc:
            raise ValueError(f"{route.setting}: {exc}") from None
        missing = sorted(workflow_inputs - placeholders(template))
        if missing:
            raise ValueError(
                f"{route.setting}: workflow {route.model} has no {{{{{missing[0]}}}}} input"
            )
