"""Rate limits on the ``limits`` library (memory storage by default, Redis by setting).

Two allowances per account. **Work** (every request that is not a read: each ``POST``,
``PATCH``, ``PUT``, ``DELETE``) is counted against the account's plan (per minute and, except
enterprise, per day); some endpoints add their own per-minute bucket (the spec's per-endpoint
rates of the unversioned surface). **Reads** (``GET`` and ``HEAD``: account, credits, history,
usage, lists, job polls) draw on a per-minute allowance of their own
(``PIXELMILL_READS_PER_MINUTE``, 600 by default, or the plan's per-minute rate where that is
higher), whatever the client, so checking a balance or
polling a job never spends the plan's work. A work request made with a test key counts only in
that key's own small bucket (:meth:`RateLimiter.hit_test_key`). All applicable buckets must admit
the request; the headers report the bucket closest to exhaustion, which is the one a client
should pace itself by, and ``X-RateLimit-Scope`` says which allowance they describe (``work``,
``reads`` or ``test-key``). A 429 names the allowance that ran out and when it refills
(``Retry-After``).

When the shared storage (Redis) cannot be reached, the limiter does not fail the request: it
counts in this process's memory until the storage answers again (one warning per outage, one
retry of the storage every ``retry_seconds``, by whichever request comes first). Each process
then enforces the limits on its own, so with N API processes an account may get up to N times
its rate for the length of the outage; the money is never at stake (credits live in the
database). See docs/decisions.md.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from limits import RateLimitItem, RateLimitItemPerDay, RateLimitItemPerMinute, storage
from limits.errors import StorageError
from limits.strategies import FixedWindowRateLimiter

from pixelmill.accounts.plans import get_plan
from pixelmill.errors import RateLimited

log = logging.getLogger("pixelmill.ratelimit")

T = TypeVar("T")

STORAGE_TIMEOUT_SECONDS = 1.0
"""Connect and read deadline of one call to a networked storage: an unreachable host costs a
request at most this much before the in-memory fallback takes over."""


WORK = "work"
READS = "reads"
TEST_KEY = "test-key"
SCOPE_HEADER = "X-RateLimit-Scope"
"""Which allowance the X-RateLimit-* headers of a response describe (``work``, ``reads``,
``test-key``)."""

READ_METHODS = frozenset({"GET", "HEAD"})
"""Requests that only read: they count in the read allowance, never in the plan's work."""

DASHBOARD_HEADER = "X-Pixelmill-Client"
DASHBOARD_CLIENT = "dashboard"
"""A read carrying ``X-Pixelmill-Client: dashboard`` also gets the work allowance's counts
(``X-RateLimit-Work-*``, read without counting), so the dashboard's "requests left" always
shows the work allowance. It changes nothing about what is counted."""


@dataclass(frozen=True)
class LimitState:
    limit: int
    remaining: int
    reset: int  # Unix time
    scope: str = WORK

    def headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(max(0, self.remaining)),
            "X-RateLimit-Reset": str(self.reset),
            SCOPE_HEADER: self.scope,
        }

    def work_headers(self) -> dict[str, str]:
        """This (work) state as ``X-RateLimit-Work-*``, beside a read's own headers."""
        return {
            "X-RateLimit-Work-Limit": str(self.limit),
            "X-RateLimit-Work-Remaining": str(max(0, self.remaining)),
            "X-RateLimit-Work-Reset": str(self.reset),
        }


# Per-minute rates of the unversioned surface (spec, "Limits").
ENDPOINT_RATES: dict[str, int] = {
    "background_removal": 100,
    "upscale": 50,
    "text_removal": 75,
    "image_to_image": 15,
    "tryon_generate": 30,
    "quick_video": 10,
}


EXPIRY_SWEEP_SECONDS = 1.0
"""How often the in-memory storage drops expired counters."""


class MemoryStorage(storage.MemoryStorage):
    """limits' in-memory storage, its expired counters dropped by a timer every
    :data:`EXPIRY_SWEEP_SECONDS` rather than one started every 10 ms under load (a new thread
    each time: a measurable share of an authenticated read's CPU). A counter past its window
    reads as zero either way (``get`` checks the expiry); the timer only frees memory."""

    def _MemoryStorage__schedule_expiry(self) -> None:  # noqa: N802 (the base class's private name)
        if not self.timer.is_alive():
            expire = self._MemoryStorage__expire_events  # type: ignore[attr-defined]
            self.timer = threading.Timer(EXPIRY_SWEEP_SECONDS, expire)
            self.timer.daemon = True
            self.timer.start()


class RateLimiter:
    """The plan, endpoint and per-IP buckets over one ``limits`` storage, with a per-process
    in-memory fallback while a networked storage is unreachable."""

    def __init__(
        self,
        storage_uri: str,
        enterprise_per_minute: int,
        retry_seconds: float = 5.0,
    ) -> None:
        self.shared = not storage_uri.startswith("memory://")
        options: dict[str, float | str | bool] = {"wrap_exceptions": True}
        if storage_uri.split("://", 1)[0].split("+", 1)[0] in ("redis", "rediss", "valkey"):
            options |= {
                "socket_connect_timeout": STORAGE_TIMEOUT_SECONDS,
                "socket_timeout": STORAGE_TIMEOUT_SECONDS,
            }
        self._storage = (
            MemoryStorage(storage_uri, wrap_exceptions=True)
            if not self.shared
            else storage.storage_from_string(storage_uri, **options)
        )
        self._limiter = FixedWindowRateLimiter(self._storage)
        self._memory = MemoryStorage()
        self._fallback = FixedWindowRateLimiter(self._memory)
        self._enterprise_per_minute = enterprise_per_minute
        self._retry_seconds = retry_seconds
        self._lock = threading.Lock()
        self._down_since: float | None = None  # monotonic time the outage was noticed
        self._next_try = 0.0

    @property
    def degraded(self) -> bool:
        """True while the shared storage is unreachable and this process counts in memory."""
        return self._down_since is not None

    def probe(self) -> bool:
        """Whether the storage answers now (a ping; readiness). Changes no state."""
        try:
            return bool(self._storage.check())
        except Exception:
            return False

    def _counting(self, count: Callable[[FixedWindowRateLimiter], T]) -> T:
        """Run ``count`` on the shared storage, or on the in-memory fallback while the shared
        one is down (retried every ``retry_seconds`` by one request)."""
        now = time.monotonic()
        with self._lock:
            use_shared = self._down_since is None or now >= self._next_try
            if self._down_since is not None and use_shared:
                self._next_try = now + self._retry_seconds  # this request probes; others wait
        if use_shared:
            try:
                result = count(self._limiter)
            except StorageError as exc:
                self._storage_failed(now, exc)
            else:
                if self._down_since is not None:
                    self._storage_back(now)
                return result
        return count(self._fallback)

    def _storage_failed(self, now: float, exc: StorageError) -> None:
        with self._lock:
            self._next_try = now + self._retry_seconds
            if self._down_since is not None:
                return
            self._down_since = now
        log.warning(
            "rate-limit storage unreachable (%s): counting in this process's memory, "
            "retrying the storage every %.0f s",
            exc.storage_error,
            self._retry_seconds,
        )

    def _storage_back(self, now: float) -> None:
        with self._lock:
            since, self._down_since = self._down_since, None
        if since is not None:
            log.warning(
                "rate-limit storage reachable again after %.1f s: shared counting resumed",
                now - since,
            )
            self._memory.reset()

    def _apply(
        self,
        buckets: list[tuple[RateLimitItem, tuple[str, ...]]],
        what: str,
        scope: str = WORK,
    ) -> LimitState:
        return self._counting(lambda limiter: _hit_all(limiter, buckets, what, scope))

    def _plan_buckets(
        self, user_id: int, plan_id: str
    ) -> tuple[list[tuple[RateLimitItem, tuple[str, ...]]], str]:
        plan = get_plan(plan_id)
        per_minute = plan.requests_per_minute or self._enterprise_per_minute
        uid = str(user_id)
        buckets: list[tuple[RateLimitItem, tuple[str, ...]]] = [
            (RateLimitItemPerMinute(per_minute), ("plan-minute", uid))
        ]
        if plan.requests_per_day is not None:
            buckets.append((RateLimitItemPerDay(plan.requests_per_day), ("plan-day", uid)))
        return buckets, f"the {plan.name} plan's work allowance"

    def hit_account(self, user_id: int, plan_id: str, endpoint: str | None = None) -> LimitState:
        """Count one work request of an account; raise RateLimited when a bucket is full."""
        buckets, what = self._plan_buckets(user_id, plan_id)
        if endpoint is not None and endpoint in ENDPOINT_RATES:
            buckets.append(
                (
                    RateLimitItemPerMinute(ENDPOINT_RATES[endpoint]),
                    ("endpoint", endpoint, str(user_id)),
                )
            )
        return self._apply(buckets, what)

    def work_state(self, user_id: int, plan_id: str) -> LimitState:
        """The account's work allowance now, without counting a request."""
        buckets, _ = self._plan_buckets(user_id, plan_id)

        def peek(limiter: FixedWindowRateLimiter) -> LimitState:
            states = []
            for item, ids in buckets:
                stats = limiter.get_window_stats(item, *ids)
                reset = int(stats.reset_time) or int(time.time()) + item.get_expiry()
                states.append(LimitState(item.amount, stats.remaining, reset))
            return min(states, key=lambda s: (s.remaining, -s.limit))

        return self._counting(peek)

    def reads_per_minute(self, plan_id: str, floor: int) -> int:
        """An account's read allowance: ``floor`` (``PIXELMILL_READS_PER_MINUTE``), or its
        plan's per-minute work rate where that is higher (an enterprise plan's 3000)."""
        plan = get_plan(plan_id)
        return max(floor, plan.requests_per_minute or self._enterprise_per_minute)

    def hit_read(self, user_id: int, plan_id: str, floor: int) -> LimitState:
        """Count one read (GET, HEAD) of an account in its read allowance
        (:meth:`reads_per_minute`), apart from the plan's work."""
        item = RateLimitItemPerMinute(self.reads_per_minute(plan_id, floor))
        return self._apply([(item, ("reads", str(user_id)))], "the read allowance", READS)

    def hit_test_key(self, user_id: int, per_minute: int) -> LimitState:
        """Count one request made with the account's test key, in that key's own per-minute
        bucket (``PIXELMILL_TEST_KEY_REQUESTS_PER_MINUTE``): test calls neither spend the
        plan's buckets nor get more than this, whatever the plan."""
        item = RateLimitItemPerMinute(per_minute)
        return self._apply(
            [(item, ("test-key", str(user_id)))], "the test key's allowance", TEST_KEY
        )

    def hit_endpoint(self, user_id: int, endpoint: str) -> LimitState | None:
        """Count one request against an endpoint's own per-minute bucket (the unversioned
        surface); None when the endpoint has no bucket of its own."""
        if endpoint not in ENDPOINT_RATES:
            return None
        return self._apply(
            [
                (
                    RateLimitItemPerMinute(ENDPOINT_RATES[endpoint]),
                    ("endpoint", endpoint, str(user_id)),
                )
            ],
            f"the {endpoint.replace('_', ' ')} endpoint's allowance",
        )

    def anonymous_remaining(self, scope: str, client_ip: str, per_day: int) -> int:
        """How many anonymous uses are left today, without counting one."""
        item = RateLimitItemPerDay(per_day)
        return self._counting(
            lambda limiter: int(limiter.get_window_stats(item, "anon", scope, client_ip).remaining)
        )

    def hit_anonymous(self, scope: str, client_ip: str, per_day: int) -> LimitState:
        """Count one anonymous use of ``scope`` (a free tool) by an IP, per day."""
        return self._apply(
            [(RateLimitItemPerDay(per_day), ("anon", scope, client_ip))],
            "this address's free uses",
            "anonymous",
        )

    def hit_ip(self, scope: str, client_ip: str, per_minute: int) -> LimitState:
        """Per-IP throttle for open endpoints such as login (brute-force protection)."""
        return self._apply(
            [(RateLimitItemPerMinute(per_minute), ("ip", scope, client_ip))],
            f"this address's {scope} allowance",
            "address",
        )

    def reset(self) -> None:
        self._storage.reset()
        self._memory.reset()


def _hit_all(
    limiter: FixedWindowRateLimiter,
    buckets: list[tuple[RateLimitItem, tuple[str, ...]]],
    what: str,
    scope: str,
) -> LimitState:
    """Count one request in every bucket; raise RateLimited at the first full one, naming the
    allowance (``what``) and when it refills."""
    states: list[LimitState] = []
    for item, ids in buckets:
        allowed = limiter.hit(item, *ids)
        stats = limiter.get_window_stats(item, *ids)
        state = LimitState(item.amount, stats.remaining, int(stats.reset_time), scope)
        if not allowed:
            retry = max(1, state.reset - int(time.time()))
            period = "minute" if isinstance(item, RateLimitItemPerMinute) else "day"
            unit = "reads" if scope == READS else "uses" if scope == "anonymous" else "requests"
            raise RateLimited(
                f"Rate limit exceeded: {what} ({item.amount} {unit} per {period}) is used up; "
                f"it refills in {retry} s",
                retry_after=retry,
                headers=LimitState(item.amount, 0, state.reset, scope).headers(),
            )
        states.append(state)
    return min(states, key=lambda s: (s.remaining, -s.limit))
