"""Plan limits: X-RateLimit-* headers on every authenticated response, 429 with Retry-After."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient

from pixelmill.resources import Resources
from tests.support.accounts import make_account


def test_headers_count_down_then_429(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, plan="free")  # 10 per minute
    seen = []
    for _ in range(10):
        r = client.get("/api/v2/account", headers=acct.key_headers)
        assert r.status_code == 200
        seen.append(int(r.headers["X-RateLimit-Remaining"]))
        assert r.headers["X-RateLimit-Limit"] == "10"
        reset = int(r.headers["X-RateLimit-Reset"])
        assert time.time() - 1 <= reset <= time.time() + 61
    assert seen == list(range(9, -1, -1))
    r = client.get("/api/v2/account", headers=acct.key_headers)
    assert r.status_code == 429
    assert r.headers["content-type"].startswith("application/json")
    assert "Rate limit" in r.json()["detail"]
    assert 1 <= int(r.headers["Retry-After"]) <= 61
    assert r.headers["X-RateLimit-Remaining"] == "0"


def test_limits_are_per_account(client: TestClient, resources: Resources) -> None:
    a = make_account(resources, plan="free")
    b = make_account(resources, plan="free")
    for _ in range(10):
        client.get("/api/v1/user", headers=a.key_headers)
    assert client.get("/api/v1/user", headers=a.key_headers).status_code == 429
    assert client.get("/api/v1/user", headers=b.key_headers).status_code == 200


def test_daily_cap_counts_the_day_window() -> None:
    import pytest

    from pixelmill.errors import RateLimited
    from pixelmill.ratelimit.limiter import RateLimiter

    limiter = RateLimiter("memory://", 3000)
    for i in range(50):
        state = limiter.hit_anonymous("tool", "203.0.113.7", per_day=50)
        assert state.remaining == 49 - i
    with pytest.raises(RateLimited) as caught:
        limiter.hit_anonymous("tool", "203.0.113.7", per_day=50)
    assert caught.value.status_code == 429
    assert int(caught.value.headers["Retry-After"]) > 60  # the day window, not a minute one
    # another IP is counted separately
    assert limiter.hit_anonymous("tool", "203.0.113.8", per_day=50).remaining == 49


def test_endpoint_bucket(resources: Resources) -> None:
    from pixelmill.errors import RateLimited
    from pixelmill.ratelimit.limiter import RateLimiter

    limiter = RateLimiter("memory://", 3000)
    acct = make_account(resources, plan="enterprise")
    ok = 0
    try:
        for _ in range(20):
            limiter.hit_account(acct.id, "enterprise", endpoint="image_to_image")
            ok += 1
    except RateLimited:
        pass
    assert ok == 15  # the spec's per-endpoint rate for image-to-image


def test_redis_storage_is_shared_between_limiters() -> None:
    """With Redis storage, two server processes (two limiters) count against one bucket."""
    import uuid

    import pytest

    from pixelmill.errors import RateLimited
    from pixelmill.ratelimit.limiter import RateLimiter
    from tests.support.services import REDIS_URL, require_service

    require_service("Redis", "127.0.0.1", 6379)
    a = RateLimiter(REDIS_URL, 3000)
    b = RateLimiter(REDIS_URL, 3000)
    ip = f"198.51.100.{uuid.uuid4().int % 250}-{uuid.uuid4().hex[:6]}"
    assert a.hit_anonymous("shared", ip, per_day=3).remaining == 2
    assert b.hit_anonymous("shared", ip, per_day=3).remaining == 1
    assert a.hit_anonymous("shared", ip, per_day=3).remaining == 0
    with pytest.raises(RateLimited):
        b.hit_anonymous("shared", ip, per_day=3)


def test_dashboard_reads_have_their_own_bucket(client: TestClient, resources: Resources) -> None:
    """A free account's dashboard reads (GET with ``X-Pixelmill-Client: dashboard``) leave
    the plan's 10 a minute untouched, up to 120 reads a minute; what the header cannot do:
    spare a POST, or read beyond its own bucket."""
    acct = make_account(resources, plan="free")
    dashboard = {**acct.key_headers, "X-Pixelmill-Client": "dashboard"}
    for i in range(30):
        r = client.get("/api/v2/account", headers=dashboard)
        assert r.status_code == 200, (i, r.text)
    assert r.headers["X-RateLimit-Limit"] == "120"
    assert r.headers["X-RateLimit-Remaining"] == "90"
    # The plan's bucket is whole: 10 plain requests pass, the 11th is refused.
    for _ in range(10):
        assert client.get("/api/v2/account", headers=acct.key_headers).status_code == 200
    assert client.get("/api/v2/account", headers=acct.key_headers).status_code == 429
    # A POST with the header counts against the plan, whose minute is spent.
    r = client.post("/api/v2/webhooks", json={"url": "http://127.0.0.1:9/h"}, headers=dashboard)
    assert r.status_code == 429
    # Dashboard reads go on in their own bucket, which has an end too.
    for _ in range(90):
        assert client.get("/api/v2/account", headers=dashboard).status_code == 200
    r = client.get("/api/v2/account", headers=dashboard)
    assert r.status_code == 429 and r.headers["X-RateLimit-Limit"] == "120"
