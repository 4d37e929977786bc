"""The in-process queue: bounded thread pools in the server process, one per lane (jobs;
webhook deliveries), so a slow webhook receiver never holds a job's thread.

Delayed tasks (webhook retries) wait on timers; if the process stops first, the sweeper finds
their rows and dispatches them again, so nothing depends on the timers surviving.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from pixelmill.observability.logs import request_id_var
from pixelmill.observability.tracing import attached, current_context
from pixelmill.queue.base import TaskRunner, lane_of

log = logging.getLogger("pixelmill.queue")


class InlineQueue:
    name = "inline"

    def __init__(self, workers: int, webhook_workers: int = 4) -> None:
        self._pools = {
            "jobs": ThreadPoolExecutor(workers, thread_name_prefix="job"),
            "webhooks": ThreadPoolExecutor(webhook_workers, thread_name_prefix="webhook"),
        }
        self._runner: TaskRunner | None = None
        self._timers: set[threading.Timer] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._waiting = dict.fromkeys(self._pools, 0)

    def bind(self, runner: TaskRunner, task_names: Iterable[str] = ()) -> None:
        """Set what runs the tasks (the backends are built after the queue). Every name is
        accepted: ``runner`` refuses unknown ones."""
        self._runner = runner

    def _run(
        self, task: str, args: tuple[str, ...], request_id: str | None = None, trace: object = None
    ) -> None:
        with self._lock:
            self._waiting[lane_of(task)] -= 1
        if self._runner is None:
            raise RuntimeError("InlineQueue used before bind()")
        token = request_id_var.set(request_id)
        try:
            with attached(trace):
                self._runner(task, args)
        except Exception:
            # A task records its own failures as state; this is the last resort log line.
            log.exception("task %s%r failed", task, args)
        finally:
            request_id_var.reset(token)

    def _submit(self, task: str, args: tuple[str, ...]) -> None:
        with self._lock:
            if self._closed:
                return
            lane = lane_of(task)
            # The enqueuing request's id and trace go with the task (its log lines, its spans).
            self._pools[lane].submit(self._run, task, args, request_id_var.get(), current_context())
            self._waiting[lane] += 1

    def enqueue(self, task: str, *args: str, delay: float = 0.0) -> None:
        if delay <= 0:
            self._submit(task, args)
            return

        def fire() -> None:
            with self._lock:
                self._timers.discard(timer)
            self._submit(task, args)

        timer = threading.Timer(delay, fire)
        timer.daemon = True
        with self._lock:
            if self._closed:
                return
            self._timers.add(timer)
        timer.start()

    def depth(self) -> dict[str, int]:
        """Tasks submitted to each lane's pool and not started yet."""
        with self._lock:
            return dict(self._waiting)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            timers = list(self._timers)
            self._timers.clear()
        for timer in timers:
            timer.cancel()
        for pool in self._pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
