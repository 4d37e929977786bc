"""A Redis outage under a running server: rate limits fall back to per-process memory (no
500s), reads that need no Redis keep working, /readyz names what is down, and everything goes
back to Redis when it returns. A real ``redis-server`` on a free port, killed mid-test."""

from __future__ import annotations

import base64
import logging
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient

from pixelmill.app import create_app
from pixelmill.errors import RateLimited
from pixelmill.ratelimit.limiter import RateLimiter
from pixelmill.resources import Resources, build_resources
from pixelmill.worker import wire
from tests.support.accounts import make_account
from tests.support.images import png_bytes
from tests.support.servers import client_for
from tests.support.services import IN_CI
from tests.support.settings import make_settings
from tests.support.waiting import wait_until

RETRY = 0.3  # PIXELMILL_RATELIMIT_RETRY_SECONDS in these tests
UNREACHABLE = "rate-limit storage unreachable"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisProcess:
    """A throwaway ``redis-server`` (no persistence) that a test can kill and start again."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            message = "redis-server is not installed"
            if IN_CI:
                pytest.fail(message)
            pytest.skip(message)
        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            [binary, *args],
            stdout=subprocess.DEVNULL,
        )

        def answers() -> bool:
            try:
                return bool(redis.Redis.from_url(self.url, socket_timeout=0.5).ping())
            except redis.RedisError:
                return False

        wait_until(answers, timeout=20, interval=0.05)

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None


@pytest.fixture
def redis_server() -> Iterator[RedisProcess]:
    server = RedisProcess(_free_port())
    server.start()
    yield server
    server.kill()


def test_limiter_counts_in_memory_while_storage_is_unreachable(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """No storage behind the URL at all: every call is answered from memory, limits still
    hold, and the outage is logged once, not once per request."""
    limiter = RateLimiter(f"redis://127.0.0.1:{_free_port()}/0", 3000, retry_seconds=RETRY)
    assert not limiter.probe()
    with caplog.at_level(logging.WARNING, "pixelmill.ratelimit"):
        for i in range(10):
            assert limiter.hit_account(7, "free").remaining == 9 - i  # free: 10 per minute
        with pytest.raises(RateLimited):
            limiter.hit_account(7, "free")
        time.sleep(RETRY * 1.5)  # a retry of the storage is due: it fails again, quietly
        assert limiter.anonymous_remaining("tool", "203.0.113.9", per_day=3) == 3
    assert limiter.degraded
    assert sum(UNREACHABLE in r.getMessage() for r in caplog.records) == 1


@pytest.fixture
def outage_resources(
    database_url: str, tmp_path: Path, redis_server: RedisProcess
) -> Iterator[Resources]:
    """A server whose rate limits and Celery broker are the throwaway Redis (nobody consumes
    the queue: jobs stay queued, which is what a poll during an outage sees)."""
    settings = make_settings(
        database_url,
        tmp_path / "data",
        ratelimit_storage=redis_server.url,
        ratelimit_retry_seconds=RETRY,
        queue="celery",
        redis_url=redis_server.url,
        celery_queue=f"outage-{redis_server.port}",
        sweep_interval_seconds=3600,
        analyze_products=False,
    )
    res = wire(build_resources(settings))
    yield res
    res.close()


def _readiness(client: TestClient) -> tuple[int, dict[str, Any]]:
    r = client.get("/readyz")
    body: dict[str, Any] = r.json()
    return r.status_code, body


def test_redis_outage_degrades_without_errors(
    outage_resources: Resources, redis_server: RedisProcess, caplog: pytest.LogCaptureFixture
) -> None:
    res = outage_resources
    acct = make_account(res, credits=20)
    free = make_account(res, credits=0, plan="free")
    image = base64.b64encode(png_bytes(40, 30)).decode()
    with client_for(create_app(res.settings, res)) as client:
        status, ready = _readiness(client)
        assert status == 200 and ready["status"] == "ready", ready
        assert set(ready["dependencies"]) == {
            "database",
            "broker",
            "rate_limit_storage",
            "object_storage",
        }
        assert all(d["status"] == "ok" for d in ready["dependencies"].values())
        assert [n for n, d in ready["dependencies"].items() if d["required"]] == [
            "database",
            "object_storage",
        ]

        # Before the outage: a result, a history row, a queued job.
        before = client.post(
            "/api/v2/convert", json={"image_base64": image}, headers=acct.key_headers
        )
        assert before.status_code == 200, before.text
        job = client.post(
            "/api/v2/jobs",
            json={"product_image": image, "images_to_generate": 1},
            headers=acct.key_headers,
        )
        assert job.status_code == 202, job.text
        job_id = job.json()["job_id"]
        assert client.post("/api/v2/account/test-key", headers=free.key_headers).status_code == 201

        redis_server.kill()
        answers: list[tuple[str, int]] = []

        def call(method: str, path: str, **kwargs: Any) -> Any:
            started = time.perf_counter()
            r = client.request(method, path, **kwargs)
            answers.append((f"{method} {path} {time.perf_counter() - started:.3f}s", r.status_code))
            return r

        with caplog.at_level(logging.WARNING, "pixelmill.ratelimit"):
            for _ in range(5):
                r = call("GET", "/api/v2/account", headers=acct.key_headers)
                assert r.status_code == 200
                assert int(r.headers["X-RateLimit-Remaining"]) >= 0  # still counted
            poll = call("GET", f"/api/v2/jobs/{job_id}", headers=acct.key_headers)
            assert poll.json()["status"] in ("pending", "queued")
            result_url = before.json()["result_url"]
            assert call("GET", result_url).content[:8] == b"\x89PNG\r\n\x1a\n"
            history = call("GET", "/api/v1/history", headers=acct.key_headers).json()
            assert sorted(i["kind"] for i in history["items"]) == ["grant", "job", "sync"]
            during = call(
                "POST", "/api/v2/convert", json={"image_base64": image}, headers=acct.key_headers
            )
            assert during.json()["credits_used"] == 1
            assert call("GET", during.json()["result_url"]).status_code == 200
            created = call(
                "POST",
                "/api/v2/jobs",
                json={"product_image": image, "images_to_generate": 1},
                headers=acct.key_headers,
            )
            # Saved with its reservation; the dispatch that failed after the commit is sent
            # again by the sweeper once the broker is back.
            assert created.status_code == 202, created.text
            # The plan limit still holds, counted afresh in this process's memory (the request
            # counted in Redis before the outage is not seen): free is 10 of work per minute.
            codes = [
                call("POST", "/api/v2/account/test-key", headers=free.key_headers).status_code
                for _ in range(11)
            ]
            assert codes == [201] * 10 + [429]

            status, ready = _readiness(client)
        assert all(code < 500 for _, code in answers), answers
        assert sum(UNREACHABLE in r.getMessage() for r in caplog.records) == 1  # once
        assert res.limiter.degraded
        assert status == 200 and ready["status"] == "degraded", ready
        deps = ready["dependencies"]
        assert deps["rate_limit_storage"]["status"] == "down"
        assert deps["broker"]["status"] == "down"
        assert deps["database"]["status"] == deps["object_storage"]["status"] == "ok"
        print("during the outage:", answers)
        print("readyz during the outage:", ready)

        # Redis comes back (empty: --save ''): the next request after the retry interval
        # counts in Redis again, and /readyz is ready again.
        redis_server.start()
        wait_until(lambda: _readiness(client)[1]["status"] == "ready", timeout=10)
        back = time.monotonic()

        def counted_in_redis() -> bool:
            r = client.get("/api/v2/account", headers=acct.key_headers)
            assert r.status_code == 200
            return not res.limiter.degraded

        wait_until(counted_in_redis, timeout=10, interval=0.05)
        assert time.monotonic() - back < RETRY + 2
        keys = redis.Redis.from_url(redis_server.url).keys("LIMITS*")
        assert any(str(acct.id).encode() in k for k in keys), keys
