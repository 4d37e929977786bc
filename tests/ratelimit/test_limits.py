"""Plan limits: X-RateLimit-* headers on every authenticated response, 429 with Retry-After."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient

from pixelmill.resources import Resources
from tests.support.accounts import make_account


def test_headers_count_down_then_429(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, plan="free")  # 10 per minute of work
    seen = []
    for _ in range(10):
        r = client.post("/api/v2/account/test-key", headers=acct.key_headers)
        assert r.status_code == 201, r.text
        seen.append(int(r.headers["X-RateLimit-Remaining"]))
        assert r.headers["X-RateLimit-Limit"] == "10"
        assert r.headers["X-RateLimit-Scope"] == "work"
        reset = int(r.headers["X-RateLimit-Reset"])
        assert time.time() - 1 <= reset <= time.time() + 61
    assert seen == list(range(9, -1, -1))
    r = client.post("/api/v2/account/test-key", headers=acct.key_headers)
    assert r.status_code == 429
    assert r.headers["content-type"].startswith("application/json")
    retry = int(r.headers["Retry-After"])
    assert 1 <= retry <= 61
    assert r.json()["detail"] == (
        "Rate limit exceeded: the Free plan's work allowance (10 requests per minute) is used "
        f"up; it refills in {retry} s"
    )
    assert r.headers["X-RateLimit-Remaining"] == "0"
    assert r.headers["X-RateLimit-Scope"] == "work"


def test_limits_are_per_account(client: TestClient, resources: Resources) -> None:
    a = make_account(resources, plan="free")
    b = make_account(resources, plan="free")
    for _ in range(10):
        client.post("/api/v2/account/test-key", headers=a.key_headers)
    assert client.post("/api/v2/account/test-key", headers=a.key_headers).status_code == 429
    assert client.post("/api/v2/account/test-key", headers=b.key_headers).status_code == 201


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


def test_reads_have_their_own_allowance_for_every_client(
    client: TestClient, resources: Resources
) -> None:
    """A free account's reads (balance, history, job list) leave the plan's 10 a minute of work
    untouched; work spent leaves reads going; the read allowance has an end of its own."""
    resources.settings.reads_per_minute = 40
    acct = make_account(resources, plan="free")
    for i, path in enumerate(["/api/v2/account", "/api/v2/account/history", "/api/v2/jobs"] * 10):
        r = client.get(path, headers=acct.key_headers)
        assert r.status_code == 200, (i, r.text)
    assert r.headers["X-RateLimit-Scope"] == "reads"
    assert r.headers["X-RateLimit-Limit"] == "40"
    assert r.headers["X-RateLimit-Remaining"] == "10"
    # The plan's work allowance is whole: 10 pass, the 11th is refused.
    for _ in range(10):
        r = client.post("/api/v2/account/test-key", headers=acct.key_headers)
        assert r.status_code == 201, r.text
    r = client.post("/api/v2/account/test-key", headers=acct.key_headers)
    assert r.status_code == 429 and "work allowance" in r.json()["detail"]
    # Reading goes on after work ran out, up to the read allowance.
    for _ in range(10):
        assert client.get("/api/v2/account", headers=acct.key_headers).status_code == 200
    r = client.get("/api/v2/account", headers=acct.key_headers)
    assert r.status_code == 429
    retry = int(r.headers["Retry-After"])
    assert r.json()["detail"] == (
        "Rate limit exceeded: the read allowance (40 reads per minute) is used up; "
        f"it refills in {retry} s"
    )
    assert r.headers["X-RateLimit-Scope"] == "reads"


def test_the_dashboard_reads_the_work_allowance_on_its_reads(
    client: TestClient, resources: Resources
) -> None:
    """A read with ``X-Pixelmill-Client: dashboard`` carries the work allowance's counts
    (read without counting) beside its own, so the dashboard shows the work allowance."""
    acct = make_account(resources, plan="free")
    dashboard = {**acct.key_headers, "X-Pixelmill-Client": "dashboard"}
    r = client.get("/api/v2/account", headers=dashboard)
    assert r.headers["X-RateLimit-Scope"] == "reads"
    assert r.headers["X-RateLimit-Work-Limit"] == "10"
    assert r.headers["X-RateLimit-Work-Remaining"] == "10"
    for _ in range(3):
        assert client.post("/api/v2/account/test-key", headers=acct.key_headers).status_code == 201
    for _ in range(2):  # reading does not spend work
        r = client.get("/api/v2/account", headers=dashboard)
        assert r.headers["X-RateLimit-Work-Remaining"] == "7"
        assert int(r.headers["X-RateLimit-Work-Reset"]) >= int(time.time())
    # Other clients' reads carry no work counts (nothing is read that they did not ask for).
    r = client.get("/api/v2/account", headers=acct.key_headers)
    assert "X-RateLimit-Work-Remaining" not in r.headers


def test_the_read_allowance_is_never_below_the_plans_rate() -> None:
    from pixelmill.ratelimit.limiter import RateLimiter

    limiter = RateLimiter("memory://", 3000)
    assert limiter.reads_per_minute("free", 600) == 600
    assert limiter.reads_per_minute("pro", 600) == 600
    assert limiter.reads_per_minute("enterprise", 600) == 3000
    state = limiter.hit_read(7, "enterprise", 600)
    assert (state.limit, state.remaining, state.scope) == (3000, 2999, "reads")
