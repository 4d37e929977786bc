"""The in-process queue: tasks dispatched only after commit (never on rollback), bounded
concurrency, delayed tasks."""

from __future__ import annotations

import threading
import time

import pytest

from pixelmill.db.models import User
from pixelmill.queue import dispatch_after_commit
from pixelmill.queue.inline import InlineQueue
from pixelmill.resources import Resources
from tests.support.waiting import wait_until

pytestmark = pytest.mark.both_databases


def test_dispatch_waits_for_commit_and_drops_on_rollback(resources: Resources) -> None:
    ran: list[tuple[str, tuple[str, ...]]] = []
    queue = InlineQueue(2)
    queue.bind(lambda task, args: ran.append((task, args)), [])
    try:
        with resources.db.transaction() as session:
            session.get(User, 1)
            dispatch_after_commit(session, queue, "t.one", "a")
            assert ran == []  # not before the commit
        wait_until(lambda: ran == [("t.one", ("a",))], timeout=10)
        with pytest.raises(RuntimeError), resources.db.transaction() as session:
            session.get(User, 1)
            dispatch_after_commit(session, queue, "t.two", "b")
            raise RuntimeError("rolled back")
        queue.enqueue("t.three")
        wait_until(lambda: ("t.three", ()) in ran, timeout=10)
        assert ("t.two", ("b",)) not in ran
    finally:
        queue.close()


def test_pool_is_bounded_and_delays_are_honoured() -> None:
    active, peak = 0, 0
    lock = threading.Lock()
    release = threading.Event()
    done: list[float] = []

    def runner(task: str, args: tuple[str, ...]) -> None:
        nonlocal active, peak
        if task == "late":
            done.append(time.monotonic())
            return
        with lock:
            active += 1
            peak = max(peak, active)
        release.wait(10)
        with lock:
            active -= 1
            done.append(time.monotonic())

    queue = InlineQueue(2)
    queue.bind(runner, [])
    try:
        for _ in range(5):
            queue.enqueue("block")
        wait_until(lambda: active == 2, timeout=10)
        assert peak == 2
        release.set()
        wait_until(lambda: len(done) == 5, timeout=10)
        assert peak == 2
        start = time.monotonic()
        queue.enqueue("late", delay=0.3)
        wait_until(lambda: len(done) == 6, timeout=10)
        assert done[-1] - start >= 0.3
    finally:
        queue.close()
