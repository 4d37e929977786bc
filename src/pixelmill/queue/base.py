"""The queue protocol and dispatch-after-commit."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Protocol

from sqlalchemy import event
from sqlalchemy.orm import Session

TaskRunner = Callable[[str, tuple[str, ...]], None]
"""Runs one task by name with its arguments (the worker side)."""

_PENDING = "pixelmill_after_commit"
log = logging.getLogger("pixelmill.queue")


LANES = ("jobs", "webhooks")
"""Tasks run in lanes that never wait for each other: ``webhooks.*`` tasks (deliveries, which
wait on other people's servers) in their own, everything else in ``jobs``."""


def lane_of(task: str) -> str:
    """The lane of a task name (a naming convention: the queue never imports a domain)."""
    return "webhooks" if task.startswith("webhooks.") else "jobs"


class TaskQueue(Protocol):
    """Sends a named task with string arguments to whatever runs tasks."""

    name: str

    def enqueue(self, task: str, *args: str, delay: float = 0.0) -> None:
        """Run ``task(*args)`` now (or after ``delay`` seconds). Never blocks on the task."""
        ...

    def close(self) -> None: ...

    def depth(self) -> dict[str, int]:
        """Tasks waiting for a worker, by lane (``pixelmill_queue_depth``)."""
        ...


def run_after_commit(session: Session, fn: Callable[[], None]) -> None:
    """Call ``fn`` once ``session`` commits; forget it if the session rolls back."""
    pending: list[Callable[[], None]] | None = session.info.get(_PENDING)
    if pending is None:
        pending = []
        session.info[_PENDING] = pending

        def _after_commit(s: Session) -> None:
            for callback in s.info.pop(_PENDING, []):
                try:
                    callback()
                except Exception:
                    # The rows are committed; the sweeper dispatches what was not sent.
                    log.exception("after-commit dispatch failed")

        def _after_rollback(s: Session, _previous: object) -> None:
            s.info.pop(_PENDING, None)

        event.listen(session, "after_commit", _after_commit, once=True)
        event.listen(session, "after_soft_rollback", _after_rollback, once=True)
    pending.append(fn)


def dispatch_after_commit(
    session: Session, queue: TaskQueue, task: str, *args: str, delay: float = 0.0
) -> None:
    """Enqueue ``task`` once ``session`` commits (never before: a worker that started earlier
    would not find the row), and not at all if it rolls back."""
    run_after_commit(session, lambda: queue.enqueue(task, *args, delay=delay))


class BindableQueue(TaskQueue, Protocol):
    """A queue whose runner (the worker side) is set by the wiring once the backends exist.
    The queue knows task names, never the domains behind them."""

    def bind(self, runner: TaskRunner, task_names: Iterable[str]) -> None: ...
