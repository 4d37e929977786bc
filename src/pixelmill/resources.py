"""The live backends, built once at startup and passed to whoever needs them (no globals).

This module builds backends only; it knows no task and no domain logic. The wiring
(:mod:`pixelmill.worker`, used by ``app.py`` and ``pixelmill worker``) binds the tasks to the
queue and the sweeps to the maintenance thread."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import httpx

from pixelmill.accounts.credentials import CredentialCache
from pixelmill.billing.stripe_checkout import StripeCheckout
from pixelmill.config import Settings
from pixelmill.db.session import Database
from pixelmill.engines.base import Engine
from pixelmill.engines.registry import PROFILES, build_engines, route
from pixelmill.jobs.service import JobBackends
from pixelmill.operations.catalog import CATALOG
from pixelmill.operations.inputs import InputReader
from pixelmill.operations.pipeline import Pipeline
from pixelmill.providers.routing import Backends, build_backends, routes_from
from pixelmill.queue.base import BindableQueue
from pixelmill.queue.factory import build_queue
from pixelmill.ratelimit.limiter import RateLimiter
from pixelmill.storage import ObjectStorage, UrlSigner
from pixelmill.storage.factory import build_storage
from pixelmill.storefront.enrichment import KIND as ENRICHMENT_KIND
from pixelmill.storefront.service import settle_job

log = logging.getLogger("pixelmill.maintenance")


class Maintenance:
    """A daemon thread running periodic sweeps (stale reservations, expired files, stranded
    jobs). Every task is idempotent, so several processes may run it at once."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.tasks: list[Callable[[], object]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_once(self) -> None:
        for task in self.tasks:
            try:
                task()
            except Exception:
                log.exception("maintenance task %s failed", getattr(task, "__name__", task))

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.run_once()

    def start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="maintenance", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None


@dataclass
class Resources:
    settings: Settings
    db: Database
    limiter: RateLimiter
    storage: ObjectStorage
    signer: UrlSigner
    engines: Mapping[str, Engine]
    pipeline: Pipeline
    maintenance: Maintenance
    queue: BindableQueue
    library_storage: ObjectStorage
    providers: Backends | None = None
    """The generative backends operations are routed to (None: every operation offline)."""
    credentials: CredentialCache = field(init=False)
    """Whom recently seen API keys and access tokens belong to (``accounts/credentials.py``)."""
    jobs: JobBackends = field(init=False)
    billing: StripeCheckout | None = field(init=False)
    """Credit packs sold through Stripe Checkout (None: no Stripe keys, nothing on sale)."""
    wired: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.credentials = CredentialCache(self.settings.auth_cache_seconds)
        self.billing = StripeCheckout.from_settings(self.settings)
        self.jobs = JobBackends(
            db=self.db,
            queue=self.queue,
            signer=self.signer,
            inputs=self.library_storage,
            # Each kind's step in the transaction that ends one of its jobs.
            on_terminal={ENRICHMENT_KIND: settle_job},
        )

    @property
    def secret(self) -> str:
        return self.settings.resolved_secret_key

    @property
    def inputs(self) -> InputReader:
        """Reads, decodes and validates input images within the plan's limits."""
        return self.pipeline.inputs

    def start(self) -> None:
        """Start background work (called by the app's lifespan)."""
        self.maintenance.start()

    def close(self) -> None:
        self.maintenance.stop()
        if self.providers is not None:
            self.providers.close()
        self.queue.close()
        self.pipeline.close()
        self.db.dispose()


def route_engines(
    engines: Mapping[str, Engine],
    settings: Settings,
    transport: httpx.BaseTransport | None = None,
) -> tuple[dict[str, Engine], Backends | None]:
    """The registry with each ``PIXELMILL_ROUTE_*`` route's hosted engine in front of its
    offline one, and the provider clients (``None`` and the registry unchanged when nothing is
    routed); a bad route is a ``ValueError`` naming its setting."""
    routes = routes_from(settings, PROFILES[settings.backend_profile])
    if not routes:
        return dict(engines), None
    backends = build_backends(settings, routes, transport)
    engine_of = {name: op.engine for name, op in CATALOG.items()}
    return route(engines, routes, backends, settings.provider_fallback, engine_of), backends


def build_resources(settings: Settings) -> Resources:
    """Build every backend the settings ask for. Nothing runs yet: the wiring binds the tasks
    (:func:`pixelmill.worker.wire`) and the lifespan starts the maintenance thread."""
    db = Database(settings.resolved_database_url)
    storage = build_storage(settings, "files")
    signer = UrlSigner(settings.resolved_secret_key, settings.result_ttl_hours * 3600)
    # Operations routed to a provider (PIXELMILL_ROUTE_*) get a provider-backed engine in
    # front of their offline one; with no route the registry is unchanged.
    engines, providers = route_engines(
        build_engines(settings.models_dir, settings.font_dir, settings.onnx_providers), settings
    )
    return Resources(
        settings=settings,
        db=db,
        limiter=RateLimiter(
            settings.ratelimit_storage,
            settings.enterprise_requests_per_minute,
            retry_seconds=settings.ratelimit_retry_seconds,
        ),
        storage=storage,
        signer=signer,
        engines=engines,
        pipeline=Pipeline(settings, db, storage, signer, engines),
        maintenance=Maintenance(settings.sweep_interval_seconds),
        queue=build_queue(settings),
        # Library images (products, job inputs) outlive results: a store of their own.
        library_storage=build_storage(settings, "library"),
        providers=providers,
    )
