"""Admission control for synchronous work, and handing memory back to the system.

A burst of requests must not turn into a burst of decoded images. :class:`Admission` lets at
most ``slots`` requests (the size of the CPU pool) work at once: read and decode the input,
reserve credits, run the engine, encode and store. Up to ``max_queued`` more wait, in arrival
order, holding only the request body they came with; anyone beyond that, or anyone who has
waited ``max_wait_s``, is refused at once with :class:`~pixelmill.errors.ServerBusy` (503 and a
``Retry-After`` estimated from the recent time per request). A refused request has decoded
nothing and reserved nothing, so it costs the caller nothing.

The bound is per process (each uvicorn worker has its own); the state is guarded by a plain
lock and each waiter is woken on its own event loop, so one instance serves any number of loops
(test clients, several servers in one process).

When the process has been idle for a second (no slot taken since the last was given back)
:func:`trim_memory` asks glibc to return freed heap pages (``malloc_trim``), so the resident
size falls back after a burst instead of staying at its high-water mark; requests that follow
one another closer than that reuse the memory the last one freed instead of faulting it in
afresh (with the 4 MiB mapping threshold, ~9 % of a 1 MP background removal).
:func:`tune_allocator` makes large buffers (float planes of large images, engine
intermediates) come from their own mappings that go back to the system when freed, and caps
the number of malloc arenas; both are no-ops where the C library is not glibc.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import math
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Collection
from contextlib import asynccontextmanager
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from pixelmill.errors import ServerBusy
from pixelmill.observability.http import ROUTE_KEY
from pixelmill.observability.metrics import ADMISSION_REJECTED

log = logging.getLogger(__name__)

IDLE_DELAY_S = 1.0
"""How long the process must stay idle before ``on_idle`` runs. Requests one after another keep
their freed memory for the next one instead of faulting it in afresh every time; a burst's is
handed back a second after the burst ends."""

MAX_RETRY_AFTER_S = 60
"""A ``Retry-After`` is never longer than this."""

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8


def _glibc() -> Any:
    """The C library if it is glibc (has ``malloc_trim``), else ``None``."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _glibc()


def tune_allocator(*, mmap_threshold: int, arena_max: int) -> bool:
    """Set glibc's malloc options for this process; ``False`` where that is not possible.

    ``mmap_threshold`` (bytes, 0: leave glibc's default) fixes the size above which an
    allocation gets its own mapping, returned to the system on ``free``; a fixed value also stops
    glibc from raising the threshold after the first large free (its default), which would
    otherwise put every later decoded image on the heap. ``arena_max`` (0: leave alone) caps
    the per-thread arenas, whose free space is otherwise kept per thread."""
    if _LIBC is None:
        return False
    ok = True
    if mmap_threshold > 0:
        ok = bool(_LIBC.mallopt(_M_MMAP_THRESHOLD, mmap_threshold)) and ok
        ok = bool(_LIBC.mallopt(_M_TRIM_THRESHOLD, 2 * mmap_threshold)) and ok
    if arena_max > 0:
        ok = bool(_LIBC.mallopt(_M_ARENA_MAX, arena_max)) and ok
    return ok


def trim_memory() -> bool:
    """Return free heap memory to the system (glibc ``malloc_trim(0)``); ``True`` if some was."""
    if _LIBC is None:
        return False
    return bool(_LIBC.malloc_trim(0))


_Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]"]


class Admission:
    """A bounded, first-come queue in front of ``slots`` working places.

    ``on_idle`` (if given) is called in a thread once no slot has been taken for
    ``idle_delay_s`` after the last one was given back."""

    def __init__(
        self,
        slots: int,
        max_queued: int,
        max_wait_s: float,
        *,
        on_idle: Callable[[], object] | None = None,
        idle_delay_s: float = IDLE_DELAY_S,
    ) -> None:
        self.slots = max(1, slots)
        self.max_queued = max(0, max_queued)
        self.max_wait_s = max_wait_s
        self.on_idle = on_idle
        self.idle_delay_s = idle_delay_s
        self.active = 0
        self.refused = 0
        self._waiters: deque[_Waiter] = deque()
        self._lock = threading.Lock()
        self._seconds_per_request = 1.0  # a moving average of the time a slot is held
        self._idle_call_running = False
        self._idle_since = 0.0  # when the last slot was given back

    @property
    def queued(self) -> int:
        return len(self._waiters)

    @property
    def full(self) -> bool:
        """Every slot is taken and the queue is full: the next request would be refused."""
        return self.active >= self.slots and len(self._waiters) >= self.max_queued

    def refuse(self, why: str) -> ServerBusy:
        """The refusal of a request turned away before it asked for a slot."""
        with self._lock:
            self.refused += 1
            return self._busy(why)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one working place for the duration of the block, or raise
        :class:`ServerBusy` (the queue is full, or the wait ran past ``max_wait_s``)."""
        await self.acquire()
        started = time.monotonic()
        try:
            yield
        finally:
            self.release(time.monotonic() - started)

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self.active < self.slots and not self._waiters:
                self.active += 1
                return
            if len(self._waiters) >= self.max_queued:
                self.refused += 1
                raise self._busy("the queue is full")
            waiter: _Waiter = (loop, loop.create_future())
            self._waiters.append(waiter)
        try:
            await asyncio.wait_for(waiter[1], self.max_wait_s)
        except BaseException as exc:
            with self._lock:
                handed = waiter not in self._waiters
                if not handed:
                    self._waiters.remove(waiter)
            if handed:  # a slot was handed over as we gave up: pass it on
                self.release(None)
            if isinstance(exc, TimeoutError):
                with self._lock:
                    self.refused += 1
                    raise self._busy("it waited too long for a free place") from None
            raise

    def release(self, held_s: float | None) -> None:
        """Give a slot back: to the first waiter if there is one."""
        with self._lock:
            if held_s is not None:
                self._seconds_per_request += 0.2 * (held_s - self._seconds_per_request)
            if self._waiters:
                loop, future = self._waiters.popleft()
                loop.call_soon_threadsafe(_wake, future)
                return
            self.active -= 1
            if self.active > 0 or self.on_idle is None:
                return
            self._idle_since = time.monotonic()
            if self._idle_call_running:  # its timer sees the new idle time
                return
            self._idle_call_running = True
        threading.Thread(target=self._call_on_idle, name="admission-idle", daemon=True).start()

    def _call_on_idle(self) -> None:
        """Wait until the process has been idle for ``idle_delay_s``, then call ``on_idle``;
        give up when work is going on (its end starts this again)."""
        while True:
            with self._lock:
                if self.active > 0:
                    self._idle_call_running = False
                    return
                wait = self._idle_since + self.idle_delay_s - time.monotonic()
                if wait <= 0:
                    self._idle_call_running = False
                    break
            time.sleep(wait)
        try:
            assert self.on_idle is not None
            self.on_idle()
        except Exception:  # a failed trim must never break the request path
            log.exception("on_idle failed")

    def _busy(self, why: str) -> ServerBusy:
        # Called with the lock held. The time until the queue ahead would have drained.
        ADMISSION_REJECTED.inc()
        ahead = (len(self._waiters) + self.active) / self.slots
        retry = min(MAX_RETRY_AFTER_S, max(1, math.ceil(ahead * self._seconds_per_request)))
        return ServerBusy(
            f"The server is busy ({self.active} images in work, {len(self._waiters)} waiting; "
            f"{why}); nothing was charged. Retry after {retry} s.",
            retry_after=retry,
        )


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class RefuseWhenFull:
    """ASGI middleware: a ``POST`` to one of ``paths`` (routes that run synchronous image work)
    arriving while ``admission`` is full is answered 503 with ``Retry-After`` at once. Its body
    is read and dropped chunk by chunk, never gathered, parsed or decoded, so a burst of
    refusals costs no memory; the connection stays usable. A request let through may still be
    refused by the pipeline's own admission (the queue filled in the meantime)."""

    def __init__(self, app: ASGIApp, admission: Admission, paths: Collection[str]) -> None:
        self.app = app
        self.admission = admission
        self.paths = frozenset(paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or not self.admission.full
            or scope["path"] not in self.paths
        ):
            await self.app(scope, receive, send)
            return
        busy = self.admission.refuse("the queue is full")
        scope[ROUTE_KEY] = scope["path"]  # one of the routes' own templates (no parameters)
        while True:
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        response = JSONResponse({"detail": busy.message}, busy.status_code, headers=busy.headers)
        await response(scope, receive, send)
