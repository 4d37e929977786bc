"""Traces (``pixelmill[otel]``): ``pixelmill serve`` with ``OTEL_EXPORTER_OTLP_ENDPOINT`` set
sends its spans to an OTLP/HTTP receiver on 127.0.0.1; a job's spans (its run, the engine's
render, their SQL) share the trace of the request that created it."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.observability.helpers import Receiver
from tests.queue.workers import PIXELMILL, ROOT, kill
from tests.support.api import b64_png
from tests.support.settings import TEST_SECRET
from tests.support.waiting import wait_until

pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")
pytest.importorskip("opentelemetry.exporter.otlp.json.http", reason="the otel extra")


@pytest.mark.slow
def test_a_jobs_spans_share_the_trace_of_its_request(receiver: Receiver, tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIXELMILL_", "OTEL_"))}
    env |= {
        "PIXELMILL_ENV": "testing",
        "PIXELMILL_SECRET_KEY": TEST_SECRET,
        "PIXELMILL_DATA_DIR": str(tmp_path / "data"),
        "PIXELMILL_SCENE_SIZE": "256",
        "PIXELMILL_ANALYZE_PRODUCTS": "false",
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
        "OTEL_BSP_SCHEDULE_DELAY": "200",
    }
    with (tmp_path / "api.log").open("wb") as out:
        proc = subprocess.Popen(
            [str(PIXELMILL), "serve", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=str(ROOT),
        )
    base = f"http://127.0.0.1:{port}"
    try:

        def up() -> bool:
            try:
                return httpx.get(f"{base}/healthz", timeout=2).is_success
            except httpx.HTTPError:
                return False

        wait_until(up, timeout=120, interval=0.3)
        fresh = httpx.Limits(max_keepalive_connections=0)  # no keep-alive race
        with httpx.Client(base_url=base, timeout=30, limits=fresh) as client:
            r = client.post(
                "/api/auth/register", json={"email": "t@example.com", "password": "pw-123456"}
            )
            key = {"Authorization": f"Bearer {r.json()['api_key']}"}
            product = client.post(
                "/api/v2/products", json={"image": b64_png(), "filename": "a.png"}, headers=key
            ).json()
            r = client.post(
                "/api/v2/generate/scenes",
                json={"product_uuid": product["uuid"], "num_scenes": 1},
                headers=key,
            )
            assert r.status_code == 202, r.text
            job_id = r.json()["job_id"]

            def finished() -> bool:
                status = client.get(f"/api/v2/jobs/{job_id}", headers=key).json()["status"]
                return status in ("completed", "failed")

            wait_until(finished, timeout=120, interval=0.3)

        def job_spans() -> list[dict[str, Any]]:
            return [s for s in receiver.spans if s["name"] in ("job", "render scenes")]

        wait_until(lambda: len(job_spans()) >= 2, timeout=30, interval=0.2)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                kill(proc)
    by_name: dict[str, list[dict[str, Any]]] = {}
    for span in receiver.spans:
        by_name.setdefault(span["name"], []).append(span)
    create = [s for s in receiver.spans if "/api/v2/generate/scenes" in s["name"]]
    assert create, sorted(by_name)
    trace_id = create[0]["traceId"]
    job = by_name["job"][0]
    assert job["traceId"] == trace_id  # the job continues the request's trace
    assert any(s["traceId"] == trace_id for s in by_name["render scenes"])
    # FastAPI's own spans, and SQLAlchemy's (connections only: its instrumentation does not
    # know SQLAlchemy 2.1's statement events yet; docs/observability.md).
    in_trace = {s["name"].split()[0] for s in receiver.spans if s["traceId"] == trace_id}
    assert {"fastapi.endpoint", "connect", "job", "render"} <= in_trace, sorted(in_trace)
