"""The wiring of background work: which function runs each task name, and what the
maintenance thread sweeps. ``app.py`` wires the server's resources with :func:`wire`;
``pixelmill worker`` runs :func:`run_worker`. Domains never import this module; the queue
adapters see only task names."""

from __future__ import annotations

import contextlib
import itertools
import logging
import multiprocessing
import multiprocessing.process
import os
import signal
import threading
from collections.abc import Callable
from functools import partial

from pixelmill import idempotency
from pixelmill.config import Settings
from pixelmill.engines.base import MultiImageEngine
from pixelmill.generation.avatars import AvatarKind
from pixelmill.generation.people import PeopleKind
from pixelmill.generation.scenes import SCENES_KIND, ScenesKind
from pixelmill.generation.service import AVATAR_KIND, PEOPLE_KINDS, operation_for
from pixelmill.jobs import tasks as job_tasks
from pixelmill.jobs.runner import JobKind, JobRunner
from pixelmill.library import tasks as library_tasks
from pixelmill.library.images import load_image
from pixelmill.marketing.ad_kinds import (
    AD_PACK_KIND,
    ASSET_COLLECTION_KIND,
    AdPackKind,
    AssetCollectionKind,
)
from pixelmill.marketing.kinds import VideoKind
from pixelmill.marketing.service import VIDEO_KIND
from pixelmill.marketing.video import Voiceover
from pixelmill.observability.logs import configure_logging
from pixelmill.observability.metrics import (
    QueueDepthCollector,
    resident_bytes,
    serve_metrics,
    start_process_sampler,
)
from pixelmill.observability.tracing import setup_tracing
from pixelmill.operations.catalog import CATALOG
from pixelmill.operations.params import multi_image_engine_for
from pixelmill.queue.base import LANES
from pixelmill.resources import Resources, build_resources
from pixelmill.storefront.enrichment import KIND as ENRICHMENT_KIND
from pixelmill.storefront.enrichment import EnrichmentKind
from pixelmill.webhooks import tasks as webhook_tasks

log = logging.getLogger("pixelmill.worker")

Task = Callable[..., object]


def multi_image_engine(res: Resources, operation: str) -> MultiImageEngine:
    """The registry's engine of a catalog operation that jobs run image by image."""
    return multi_image_engine_for(res.engines, CATALOG[operation])


def job_runner(res: Resources) -> JobRunner:
    """The ``"jobs.run"`` body: one kind per job kind, each through the registry's engines."""
    load_input = partial(load_image, res.inputs, res.library_storage)
    scenes = ScenesKind(
        engine=multi_image_engine(res, "scenes"),
        load_input=load_input,
        scene_size=res.settings.scene_size,
    )
    avatars = AvatarKind(
        guided=multi_image_engine(res, operation_for("guided").name),
        reference=multi_image_engine(res, operation_for("reference").name),
        load_input=load_input,
        library_store=res.library_storage,
    )
    kinds: dict[str, JobKind] = {SCENES_KIND: scenes, AVATAR_KIND: avatars}
    for kind in PEOPLE_KINDS:
        if CATALOG[kind].engine in res.engines:
            kinds[kind] = PeopleKind(multi_image_engine(res, kind), load_input)
    voiceover = Voiceover.of(res.engines)
    kinds[VIDEO_KIND] = VideoKind(load_input, voiceover)
    kinds[ENRICHMENT_KIND] = EnrichmentKind(
        db=res.db,
        engines=res.engines,
        reader=res.inputs,
        inputs=res.library_storage,
        scene_size=res.settings.scene_size,
    )
    if CATALOG["ad"].engine in res.engines:
        ads = res.engines[CATALOG["ad"].engine]
        kinds[AD_PACK_KIND] = AdPackKind(
            scenes=scenes.engine,
            ads=ads,
            limits=res.inputs.limits(),
            allow_loopback=res.settings.allow_loopback_urls,
            scene_size=res.settings.scene_size,
            voiceover=voiceover,
            copywriter=res.engines["ad_copy"],
        )
        kinds[ASSET_COLLECTION_KIND] = AssetCollectionKind(
            scenes=scenes.engine, ads=ads, load_input=load_input, scene_size=res.settings.scene_size
        )
    return JobRunner(
        backends=res.jobs,
        kinds=kinds,
        results=res.storage,
        lease_seconds=float(res.settings.job_lease_seconds),
    )


def task_table(res: Resources) -> dict[str, Task]:
    """Task name -> the function that runs it with these resources."""
    return {
        job_tasks.RUN: job_runner(res).run,
        webhook_tasks.DELIVER: partial(webhook_tasks.deliver, res.db, res.queue, res.settings),
        library_tasks.ANALYZE: partial(
            library_tasks.analyze_product,
            res.db,
            partial(load_image, res.inputs, res.library_storage),
        ),
    }


def sweep(res: Resources) -> dict[str, int]:
    """The maintenance sweep of background work: stranded jobs, overdue webhook deliveries,
    expired idempotency records. Idempotent; several processes may run it at once."""
    counts = job_tasks.sweep(
        res.jobs,
        dispatch_timeout_seconds=res.settings.job_dispatch_timeout_seconds,
        max_attempts=res.settings.job_max_attempts,
    )
    counts["webhooks_dispatched"] = webhook_tasks.sweep(res.db, res.queue)
    with res.db.transaction() as session:
        counts["idempotency_expired"] = idempotency.expire(session)
    return counts


def wire(res: Resources) -> Resources:
    """Bind the task table to the queue and the sweeps to the maintenance thread (once)."""
    if res.wired:
        return res
    table = task_table(res)

    def run(task: str, args: tuple[str, ...]) -> None:
        table[task](*args)  # a KeyError for an unknown name: the queue logs it

    res.queue.bind(run, table)
    res.maintenance.tasks.extend([res.pipeline.sweep, partial(sweep, res)])
    res.wired = True
    return res


RECYCLE_EXIT = 75
"""The exit status of a worker child that stopped to be replaced (its task or memory limit)."""


def run_worker(
    settings: Settings, concurrency: int | None = None, lanes: tuple[str, ...] = LANES
) -> None:
    """Run a Celery worker for ``lanes`` until it is stopped (``pixelmill worker``): in this
    process, or, with ``PIXELMILL_WORKER_MAX_TASKS_PER_CHILD`` or
    ``PIXELMILL_WORKER_MAX_MEMORY_PER_CHILD_MB`` set, in a child process replaced by a fresh
    one each time it reaches a limit."""
    configure_logging(settings.log_format, settings.log_level)
    if settings.queue != "celery":
        raise SystemExit("pixelmill worker needs PIXELMILL_QUEUE=celery")
    recycle = settings.worker_max_tasks_per_child or settings.worker_max_memory_per_child_mb
    if not recycle:
        _work(settings, concurrency, lanes)
        return
    _supervise(settings, concurrency, lanes)


def _supervise(settings: Settings, concurrency: int | None, lanes: tuple[str, ...]) -> None:
    """Start a worker child, and a fresh one each time the last stopped to be recycled; a
    SIGTERM or SIGINT here is passed to the child (a warm shutdown) and ends the loop."""
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: nothing inherited
    stopping = False
    child: multiprocessing.process.BaseProcess | None = None

    def forward(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        if child is not None and child.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    while not stopping:
        child = context.Process(
            target=_child, args=(settings, concurrency, lanes), name="pixelmill-worker"
        )
        child.start()
        child.join()
        if stopping:
            return
        if child.exitcode != RECYCLE_EXIT:
            raise SystemExit(f"the worker process {child.pid} stopped ({child.exitcode})")
        log.info("worker process %s recycled; starting a fresh one", child.pid)


def _child(settings: Settings, concurrency: int | None, lanes: tuple[str, ...]) -> None:
    configure_logging(settings.log_format, settings.log_level)
    recycled = threading.Event()
    with contextlib.suppress(SystemExit):
        _work(settings, concurrency, lanes, recycled)
    if recycled.is_set():
        raise SystemExit(RECYCLE_EXIT)


def _work(
    settings: Settings,
    concurrency: int | None,
    lanes: tuple[str, ...],
    recycled: threading.Event | None = None,
) -> None:
    from pixelmill.queue.celery import CeleryQueue  # only a worker process needs Celery loaded

    setup_tracing("pixelmill-worker")
    res = wire(build_resources(settings))
    queue = res.queue
    assert isinstance(queue, CeleryQueue)
    if recycled is not None:
        _recycle_after_limits(settings, recycled)
    stop_metrics = None
    if settings.metrics:
        start_process_sampler()
        stop_metrics = serve_metrics(
            settings.worker_metrics_host,
            settings.worker_metrics_port,
            settings.metrics_token,
            lambda: [QueueDepthCollector(queue.depth)],
        )
    res.start()
    try:
        queue.work(concurrency or settings.job_workers, lanes)
    finally:
        res.close()
        if stop_metrics is not None:
            stop_metrics()


def _recycle_after_limits(settings: Settings, recycled: threading.Event) -> None:
    """After each task, check this process's limits; the first one reached starts a warm
    shutdown (running tasks finish, nothing more is taken) and marks the process recycled."""
    from celery.signals import task_postrun

    max_tasks = settings.worker_max_tasks_per_child
    max_bytes = (settings.worker_max_memory_per_child_mb or 0) * 1024 * 1024
    done = itertools.count(1)
    lock = threading.Lock()

    def after_task(**_: object) -> None:
        with lock:
            count = next(done)
            if recycled.is_set():
                return
            rss = resident_bytes(os.getpid())
            why = (
                f"{count} tasks"
                if max_tasks is not None and count >= max_tasks
                else f"{rss // (1024 * 1024)} MiB resident"
                if max_bytes and rss > max_bytes
                else None
            )
            if why is None:
                return
            recycled.set()
        log.info("worker process %s is recycled after %s", os.getpid(), why)
        os.kill(os.getpid(), signal.SIGTERM)  # Celery's warm shutdown

    task_postrun.connect(after_task, weak=False)
