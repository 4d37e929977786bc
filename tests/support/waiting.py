"""Waiting for something to happen: poll a condition with a deadline, or wait for an event;
never a fixed sleep."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pixelmill.queue.inline import InlineQueue
from pixelmill.resources import Resources


def wait_until(predicate: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05) -> Any:
    """Poll ``predicate`` until it returns something truthy or the deadline passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)


def drain_jobs(resources: Resources) -> None:
    """Wait until every task the in-process queue is running has ended (a job run that lost its
    claim included), by closing the queue: it joins its threads and takes no more work, so call
    it when the test has nothing left to enqueue."""
    assert isinstance(resources.queue, InlineQueue), "only the in-process queue can be drained"
    resources.queue.close()
