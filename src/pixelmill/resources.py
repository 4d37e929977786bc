"""The live backends, built once at startup and passed to whoever needs them (no globals)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from pixelmill.config import Settings
from pixelmill.db.session import Database
from pixelmill.engines.registry import build_engines
from pixelmill.operations.pipeline import Pipeline
from pixelmill.queue import TaskQueue
from pixelmill.ratelimit.limiter import RateLimiter
from pixelmill.storage import LocalStorage, ObjectStorage, UrlSigner

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
    pipeline: Pipeline
    maintenance: Maintenance
    queue: TaskQueue
    library_storage: ObjectStorage

    @property
    def secret(self) -> str:
        return self.settings.resolved_secret_key

    def start(self) -> None:
        """Start background work (called by the app's lifespan)."""
        self.maintenance.start()

    def close(self) -> None:
        self.maintenance.stop()
        self.queue.close()
        self.pipeline.close()
        self.db.dispose()


def build_resources(settings: Settings) -> Resources:
    db = Database(settings.resolved_database_url)
    storage = LocalStorage(settings.storage_dir)
    signer = UrlSigner(settings.resolved_secret_key, settings.result_ttl_hours * 3600)
    pipeline = Pipeline(settings, db, storage, signer, build_engines())
    maintenance = Maintenance(settings.sweep_interval_seconds)
    maintenance.tasks.append(pipeline.sweep)
    from pixelmill.jobs.sweeper import sweep as sweep_jobs
    from pixelmill.jobs.tasks import run_task
    from pixelmill.queue.factory import build_queue

    queue = build_queue(settings)
    resources = Resources(
        settings=settings,
        db=db,
        limiter=RateLimiter(settings.ratelimit_storage, settings.enterprise_requests_per_minute),
        storage=storage,
        signer=signer,
        pipeline=pipeline,
        maintenance=maintenance,
        queue=queue,
        # Library images (products, job inputs) outlive results: a store of their own.
        library_storage=LocalStorage(settings.data_dir / "library"),
    )
    queue.bind(lambda task, args: run_task(resources, task, args))
    maintenance.tasks.append(lambda: sweep_jobs(resources))
    return resources
