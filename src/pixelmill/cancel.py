"""Cancelling a running job's work: a :class:`CancelToken` the job runner fires when the run
lost its job (a cancel, or the sweeper handed it on), the scope that makes it the token of every
provider call the run makes, and :func:`cancelled_by` to tell such a stop from a failure.
Provider adapters (``pixelmill.providers``) import these from here."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

log = logging.getLogger("pixelmill.jobs")


class WorkCancelled(Exception):
    """Raised (as a base class: ``providers.http.Cancelled``) by work stopped through a
    :class:`CancelToken`."""


class CancelToken:
    """A cancellation hook: ``cancel()`` from any thread. A token made with parents is also
    cancelled when any of them is (a call's token: the process's, cancelled when the server
    stops, and the running job's, cancelled when the job is). Adapters check it between
    requests and while waiting (backoff, polling, a free slot), abort a request in flight
    (:meth:`on_cancel`), and then cancel the provider's work where the protocol allows it
    (Replicate ``/cancel``, ComfyUI ``/queue`` delete + ``/interrupt``)."""

    def __init__(self, *parents: CancelToken | None) -> None:
        self._event = threading.Event()
        self._parents = tuple(p for p in parents if p is not None)
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    def cancel(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks = list(self._callbacks)
        for callback in callbacks:
            try:
                callback()
            except Exception:  # a callback's failure must not stop the others
                log.warning("a cancel callback failed", exc_info=True)

    @property
    def cancelled(self) -> bool:
        return self._event.is_set() or any(p.cancelled for p in self._parents)

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True as soon as the token is cancelled."""
        deadline = time.monotonic() + max(0.0, seconds)
        while True:
            if self.cancelled:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._event.wait(min(left, 0.1))

    def _lineage(self) -> list[CancelToken]:
        tokens, todo = [], [self]
        while todo:
            token = todo.pop()
            if token not in tokens:
                tokens.append(token)
                todo.extend(token._parents)
        return tokens

    @contextmanager
    def on_cancel(self, callback: Callable[[], None]) -> Iterator[None]:
        """Call ``callback`` once, from the cancelling thread, if this token or one of its
        parents is cancelled while the block runs (at once if it already is)."""
        called = threading.Lock()

        def once() -> None:
            if called.acquire(blocking=False):
                callback()

        tokens = self._lineage()
        for token in tokens:
            with token._lock:
                token._callbacks.append(once)
        try:
            if self.cancelled:
                once()
            yield
        finally:
            for token in tokens:
                with token._lock:
                    token._callbacks.remove(once)


def cancelled_by(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was raised because of, cancelled work (a provider call's
    ``Cancelled``)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, WorkCancelled):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


_JOB_CANCEL: ContextVar[CancelToken | None] = ContextVar("pixelmill_job_cancel", default=None)


@contextmanager
def cancel_scope(token: CancelToken) -> Iterator[CancelToken]:
    """Within the block (in this thread or task), provider calls are also cancelled by
    ``token``: the job runner opens one per run and cancels it when the job is cancelled."""
    reset = _JOB_CANCEL.set(token)
    try:
        yield token
    finally:
        _JOB_CANCEL.reset(reset)


def scoped_cancel(base: CancelToken | None = None) -> CancelToken:
    """A token for one provider call: cancelled with ``base`` (the process's) or with the
    enclosing :func:`cancel_scope`'s token (the running job's)."""
    return CancelToken(base, _JOB_CANCEL.get())
