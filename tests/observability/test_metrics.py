"""``/metrics`` after real traffic through the app: every counter moves by exactly what was
sent, under the route's template (never the raw path), and the token guards it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pixelmill.app import create_app
from pixelmill.config import Settings
from pixelmill.resources import Resources, build_resources
from pixelmill.worker import wire
from tests.observability.helpers import Samples, parse, value
from tests.support.accounts import make_account
from tests.support.api import b64_png
from tests.support.servers import client_for
from tests.support.settings import make_settings

TOKEN = "metrics-token-" + "m" * 20


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return make_settings(database_url, tmp_path / "data", metrics=True, metrics_token=TOKEN)


@pytest.fixture
def observed(settings: Settings) -> Iterator[tuple[TestClient, Resources]]:
    res = wire(build_resources(settings))
    try:
        with client_for(create_app(settings, res)) as client:
            yield client, res
    finally:
        res.close()


def scrape(client: TestClient) -> Samples:
    r = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain")
    return parse(r.text)


def test_counters_match_the_requests_sent(observed: tuple[TestClient, Resources]) -> None:
    client, res = observed
    acct = make_account(res, credits=10)
    before = scrape(client)
    for _ in range(5):
        assert client.get("/api/v2/account", headers=acct.key_headers).status_code == 200
    for _ in range(2):
        assert client.get("/api/v2/account").status_code == 401
    for job in ("job_a", "job_b", "job_c"):
        r = client.get(f"/api/v2/jobs/{job}", headers=acct.key_headers)
        assert r.status_code == 404
    assert client.get("/no/such/page/12345").status_code == 404
    image = b64_png(64, 48)
    r = client.post("/api/v2/convert", json={"image_base64": image}, headers=acct.key_headers)
    assert r.status_code == 200, r.text
    assert "x-request-id" in r.headers
    after = scrape(client)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    requests = "pixelmill_http_requests_total"
    account = {"route": "/api/v2/account", "method": "GET"}
    assert moved(requests, **account, status="200") == 5
    assert moved(requests, **account, status="401") == 2
    assert moved(requests, route="/api/v2/jobs/{job_id}", method="GET", status="404") == 3
    assert moved(requests, route="unmatched", method="GET", status="404") == 1
    assert moved(requests, route="/api/v2/convert", method="POST", status="200") == 1
    # The scrape before is counted by the one after, under its own route.
    assert moved(requests, route="/metrics", method="GET", status="200") == 1
    assert not any("job_a" in str(labels) or "/no/such" in str(labels) for _, labels in after)
    duration = "pixelmill_http_request_duration_seconds_count"
    assert moved(duration, **account) == 7
    assert moved(duration, route="/api/v2/account", method="GET") == moved(requests, **account)
    assert moved("pixelmill_operation_duration_seconds_count", operation="convert") == 1
    assert moved("pixelmill_credits_charged_total", operation="convert") == 1
    assert moved("pixelmill_credits_refunded_total") == 0
    assert value(after, "pixelmill_queue_depth", lane="jobs") == 0
    assert value(after, "pixelmill_process_resident_memory_bytes") > 10 * 1024 * 1024
    assert value(after, "process_resident_memory_bytes") > 0  # the library's process metrics


def test_the_token_guards_metrics(observed: tuple[TestClient, Resources]) -> None:
    client, _ = observed
    assert client.get("/metrics").status_code == 401
    wrong = client.get("/metrics", headers={"Authorization": "Bearer not-the-token"})
    assert wrong.status_code == 401 and wrong.json()["detail"]
    assert wrong.headers["www-authenticate"] == "Bearer"
    assert TOKEN not in wrong.text
    assert scrape(client)


def test_metrics_are_off_by_default(database_url: str, tmp_path: Path) -> None:
    settings = make_settings(database_url, tmp_path / "data")
    assert settings.metrics is False
    res = wire(build_resources(settings))
    try:
        with client_for(create_app(settings, res)) as client:
            assert client.get("/metrics").status_code == 404
            assert "/metrics" not in client.get("/.well-known/openapi.json").json()["paths"]
    finally:
        res.close()
