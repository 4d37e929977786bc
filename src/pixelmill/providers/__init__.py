"""Generative backends an operation may be routed to by configuration: an OpenAI-compatible
server (chat completions with images, the images API), Replicate (predictions) and ComfyUI
(workflows). Each is an adapter speaking the provider's documented HTTP protocol through
``httpx`` (:mod:`.http`: deadlines, retries with backoff and jitter honouring ``Retry-After``, a
per-provider concurrency cap, cancellation); :mod:`.engines` puts them behind the engine
protocol with the offline engine as the fallback; :mod:`.routing` reads the
``PIXELMILL_ROUTE_<OPERATION>`` settings (docs/backends.md)."""

from pixelmill.jobs.cancel import CancelToken
from pixelmill.providers.engines import Backends, Route, RoutedEngine
from pixelmill.providers.http import HttpPolicy, ProviderFailure
from pixelmill.providers.routing import build_backends, parse_route, route_engines

__all__ = [
    "Backends",
    "CancelToken",
    "HttpPolicy",
    "ProviderFailure",
    "Route",
    "RoutedEngine",
    "build_backends",
    "parse_route",
    "route_engines",
]
