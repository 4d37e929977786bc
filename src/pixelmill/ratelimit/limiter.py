"""Rate limits on the ``limits`` library (memory storage by default, Redis by setting).

Each authenticated request is counted against the account's plan (per minute and, except
enterprise, per day); some endpoints add their own per-minute bucket (the spec's per-endpoint
rates of the unversioned surface). All applicable buckets must admit the request; the headers
report the bucket closest to exhaustion, which is the one a client should pace itself by.
"""

from __future__ import annotations

from dataclasses import dataclass

from limits import RateLimitItem, RateLimitItemPerDay, RateLimitItemPerMinute, storage
from limits.strategies import FixedWindowRateLimiter

from pixelmill.accounts.plans import get_plan
from pixelmill.errors import RateLimited


@dataclass(frozen=True)
class LimitState:
    limit: int
    remaining: int
    reset: int  # Unix time

    def headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(max(0, self.remaining)),
            "X-RateLimit-Reset": str(self.reset),
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


class RateLimiter:
    def __init__(self, storage_uri: str, enterprise_per_minute: int) -> None:
        self._storage = storage.storage_from_string(storage_uri)
        self._limiter = FixedWindowRateLimiter(self._storage)
        self._enterprise_per_minute = enterprise_per_minute

    def _apply(self, buckets: list[tuple[RateLimitItem, tuple[str, ...]]], what: str) -> LimitState:
        states: list[LimitState] = []
        for item, ids in buckets:
            allowed = self._limiter.hit(item, *ids)
            stats = self._limiter.get_window_stats(item, *ids)
            state = LimitState(item.amount, stats.remaining, int(stats.reset_time))
            if not allowed:
                retry = max(1, state.reset - int(_now()))
                raise RateLimited(
                    f"Rate limit exceeded: {item.amount} {what} per "
                    f"{'minute' if isinstance(item, RateLimitItemPerMinute) else 'day'}; "
                    f"retry in {retry} s",
                    retry_after=retry,
                    headers=LimitState(item.amount, 0, state.reset).headers(),
                )
            states.append(state)
        return min(states, key=lambda s: (s.remaining, -s.limit))

    def hit_account(self, user_id: int, plan_id: str, endpoint: str | None = None) -> LimitState:
        """Count one request of an account; raise RateLimited when a bucket is full."""
        plan = get_plan(plan_id)
        per_minute = plan.requests_per_minute or self._enterprise_per_minute
        uid = str(user_id)
        buckets: list[tuple[RateLimitItem, tuple[str, ...]]] = [
            (RateLimitItemPerMinute(per_minute), ("plan-minute", uid))
        ]
        if plan.requests_per_day is not None:
            buckets.append((RateLimitItemPerDay(plan.requests_per_day), ("plan-day", uid)))
        if endpoint is not None and endpoint in ENDPOINT_RATES:
            buckets.append(
                (RateLimitItemPerMinute(ENDPOINT_RATES[endpoint]), ("endpoint", endpoint, uid))
            )
        return self._apply(buckets, "requests")

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
            "requests",
        )

    def anonymous_remaining(self, scope: str, client_ip: str, per_day: int) -> int:
        """How many anonymous uses are left today, without counting one."""
        item = RateLimitItemPerDay(per_day)
        return int(self._limiter.get_window_stats(item, "anon", scope, client_ip).remaining)

    def hit_anonymous(self, scope: str, client_ip: str, per_day: int) -> LimitState:
        """Count one anonymous use of ``scope`` (a free tool) by an IP, per day."""
        return self._apply([(RateLimitItemPerDay(per_day), ("anon", scope, client_ip))], "uses")

    def hit_ip(self, scope: str, client_ip: str, per_minute: int) -> LimitState:
        """Per-IP throttle for open endpoints such as login (brute-force protection)."""
        return self._apply(
            [(RateLimitItemPerMinute(per_minute), ("ip", scope, client_ip))], "requests"
        )

    def reset(self) -> None:
        self._storage.reset()


def _now() -> float:
    import time

    return time.time()
