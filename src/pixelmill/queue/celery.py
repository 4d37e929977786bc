"""The distributed queue: Celery on Redis.

The server only publishes (task name + ids); ``pixelmill worker`` processes
(:mod:`pixelmill.worker`) build their own backends and run the same task functions as the
in-process queue. Messages are acknowledged
on receipt: a worker killed mid-job loses its message, and the sweeper re-dispatches the job
once its lease expires (the database, not the broker, is the source of truth).
"""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Iterable
from typing import Any

import redis
from celery import Celery

from pixelmill.config import Settings
from pixelmill.observability.logs import request_id_var
from pixelmill.queue.base import LANES, TaskRunner, lane_of

REQUEST_ID_HEADER = "pixelmill_request_id"
"""The message header carrying the enqueuing request's id to the worker."""

NODE_PREFIX = "pixelmill-"
"""A worker's Celery node name is ``pixelmill-<pid>@<host>`` (:func:`node_name`); the health
check (``queue/health.py``) pings this host's by that pattern."""


def node_name() -> str:
    """This process's Celery node name as a worker."""
    return f"{NODE_PREFIX}{os.getpid()}@{socket.gethostname()}"


def make_celery(settings: Settings) -> Celery:
    app = Celery("pixelmill", broker=settings.redis_url, set_as_current=False)
    app.conf.update(
        task_ignore_result=True,
        task_acks_late=False,
        worker_prefetch_multiplier=1,
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        # Log records go to the process's own handler (PIXELMILL_LOG_FORMAT); a stderr
        # replaced by Celery's logging proxy would swallow them.
        worker_redirect_stdouts=False,
        task_default_queue=settings.celery_queue,
        # Webhook deliveries have a queue of their own (lane_of), so workers can be given to
        # each lane (`pixelmill worker --lane`) and a slow receiver never delays a job.
        task_routes={"webhooks.*": {"queue": lane_queue(settings, "webhooks")}},
    )
    return app


def lane_queue(settings: Settings, lane: str) -> str:
    """The Celery queue of a lane: ``PIXELMILL_CELERY_QUEUE`` for jobs, a suffix for others."""
    return settings.celery_queue if lane == "jobs" else f"{settings.celery_queue}.{lane}"


class CeleryQueue:
    name = "celery"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.app = make_celery(settings)
        self._redis: redis.Redis | None = None

    def bind(self, runner: TaskRunner, task_names: Iterable[str]) -> None:
        """Register the named tasks on this app (used by the worker process)."""
        for task_name in task_names:
            self._register(task_name, runner)

    def _register(self, task_name: str, runner: TaskRunner) -> None:
        def run(task: Any, *args: str) -> None:
            # The id of the request that enqueued the task (a message header) goes into the
            # task's log lines.
            token = request_id_var.set(getattr(task.request, REQUEST_ID_HEADER, None))
            try:
                runner(task_name, tuple(args))
            finally:
                request_id_var.reset(token)

        self.app.task(name=task_name, ignore_result=True, bind=True)(run)

    def enqueue(self, task: str, *args: str, delay: float = 0.0) -> None:
        if self.settings.fault_kill_before_publish and lane_of(task) == "jobs":
            # FAULT INJECTION (PIXELMILL_FAULT_KILL_BEFORE_PUBLISH, tests only, off by default):
            # enqueue runs after the job's commit; die here, before the publish.
            os.kill(os.getpid(), signal.SIGKILL)
        options: dict[str, Any] = {}
        request_id = request_id_var.get()
        if request_id:
            options["headers"] = {REQUEST_ID_HEADER: request_id}
        if delay > 0:
            options["countdown"] = delay
        self.app.send_task(task, args=list(args), **options)

    def depth(self) -> dict[str, int]:
        """Messages waiting in each lane's Redis list (kombu keeps a queue as a list named
        after it)."""
        if self._redis is None:
            self._redis = redis.Redis.from_url(
                self.settings.redis_url or "", socket_timeout=1, socket_connect_timeout=1
            )
        return {lane: int(self._redis.llen(lane_queue(self.settings, lane))) for lane in LANES}

    def close(self) -> None:
        if self._redis is not None:
            self._redis.close()
        self.app.close()

    def work(self, concurrency: int, lanes: Iterable[str] = LANES) -> None:
        """Consume the tasks of ``lanes`` in this process until stopped (``pixelmill
        worker``)."""
        self.app.worker_main(
            [
                "worker",
                "--pool=threads",
                f"--concurrency={concurrency}",
                "--loglevel=INFO",
                "--without-gossip",
                "--without-mingle",
                "-Q",
                ",".join(lane_queue(self.settings, lane) for lane in lanes),
                "-n",
                node_name(),
            ]
        )
