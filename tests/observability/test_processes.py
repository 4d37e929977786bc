"""Metrics and logs across real processes: ``pixelmill serve --workers 2`` (one
``PROMETHEUS_MULTIPROC_DIR``) and a ``pixelmill worker`` whose child is recycled after every
task, both scraped and parsed like Prometheus does; the request id travels with the job."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import httpx
import pytest

from tests.observability.helpers import Receiver, parse, value
from tests.queue.workers import PIXELMILL, ROOT, kill
from tests.support.api import b64_png
from tests.support.services import REDIS_URL, require_service
from tests.support.settings import TEST_SECRET
from tests.support.waiting import wait_until

TOKEN = "process-metrics-token"
ACCOUNT_READS = 24


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


try:
    import opentelemetry.exporter.otlp.json.http  # noqa: F401

    TRACING = True
except ImportError:  # the otel extra is not installed: the traces are left unchecked here
    TRACING = False


@pytest.fixture
def processes(tmp_path: Path, receiver: Receiver) -> Iterator[dict[str, object]]:
    """The processes share the data folder's SQLite file (the embedded default)."""
    parsed = urlparse(REDIS_URL)
    require_service("Redis", parsed.hostname or "127.0.0.1", parsed.port or 6379)
    api_port, worker_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIXELMILL_")}
    env |= {
        "PIXELMILL_ENV": "testing",
        "PIXELMILL_SECRET_KEY": TEST_SECRET,
        "PIXELMILL_DATA_DIR": str(tmp_path / "data"),
        "PIXELMILL_QUEUE": "celery",
        "PIXELMILL_REDIS_URL": REDIS_URL,
        "PIXELMILL_CELERY_QUEUE": f"pixelmill-obs-{uuid.uuid4().hex[:8]}",
        "PIXELMILL_SCENE_SIZE": "256",
        "PIXELMILL_ANALYZE_PRODUCTS": "false",
        "PIXELMILL_ENTERPRISE_REQUESTS_PER_MINUTE": "100000",
        "PIXELMILL_AUTH_CACHE_SECONDS": "0",  # the plan changed below is read at once
        "PIXELMILL_METRICS": "true",
        "PIXELMILL_METRICS_TOKEN": TOKEN,
        "PIXELMILL_LOG_FORMAT": "json",
    }
    if TRACING:
        env |= {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "200"}
    api_env = env | {"PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "api-metrics")}
    worker_env = env | {
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "worker-metrics"),
        "PIXELMILL_WORKER_METRICS_PORT": str(worker_port),
        "PIXELMILL_WORKER_MAX_TASKS_PER_CHILD": "1",
    }
    subprocess.run([str(PIXELMILL), "migrate"], env=env, check=True, capture_output=True)
    logs = {name: tmp_path / f"{name}.log" for name in ("api", "worker")}
    argv = {
        "api": ["serve", "--port", str(api_port), "--workers", "2"],
        "worker": ["worker", "--concurrency", "1"],
    }
    procs = {}
    for name, extra in (("api", api_env), ("worker", worker_env)):
        with logs[name].open("wb") as out:
            procs[name] = subprocess.Popen(
                [str(PIXELMILL), *argv[name]],
                env=extra,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                cwd=str(ROOT),
            )
    try:
        yield {
            "api": f"http://127.0.0.1:{api_port}",
            "worker": f"http://127.0.0.1:{worker_port}/metrics",
            "logs": logs,
            "api_dir": tmp_path / "api-metrics",
            "env": env,
        }
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    kill(proc)


def up(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2, headers={"Authorization": f"Bearer {TOKEN}"}).is_success
    except httpx.HTTPError:
        return False


@pytest.mark.slow
@pytest.mark.redis
def test_two_api_processes_and_a_recycled_worker(
    processes: dict[str, object], receiver: Receiver
) -> None:
    api, worker_url = str(processes["api"]), str(processes["worker"])
    logs = processes["logs"]
    assert isinstance(logs, dict)
    wait_until(lambda: up(f"{api}/healthz"), timeout=120, interval=0.3)
    # /healthz answers as soon as one API process serves; a request that reaches the other one
    # while it still starts is reset (seen on a loaded machine), so both must say they are up.
    wait_until(lambda: logs["api"].read_text().count("startup complete") >= 2, timeout=120)
    wait_until(lambda: up(worker_url), timeout=120, interval=0.3)
    # A fresh connection each request: no race with a server closing an idle keep-alive one.
    fresh = httpx.Limits(max_keepalive_connections=0)
    with httpx.Client(base_url=api, timeout=30, limits=fresh) as client:
        r = client.post(
            "/api/auth/register", json={"email": "p@example.com", "password": "pw-123456"}
        )
        assert r.status_code in (200, 201), r.text
        key = {"Authorization": f"Bearer {r.json()['api_key']}"}
        env = processes["env"]
        assert isinstance(env, dict)
        plan = [str(PIXELMILL), "admin", "set-plan", "p@example.com", "enterprise"]
        subprocess.run(plan, env=env, check=True, capture_output=True)
        for _ in range(ACCOUNT_READS):
            # A fresh connection each: the two processes share the listening socket.
            assert httpx.get(f"{api}/api/v2/account", headers=key, timeout=30).status_code == 200
        product = client.post(
            "/api/v2/products", json={"image": b64_png(), "filename": "a.png"}, headers=key
        ).json()
        jobs = []
        for n in range(2):
            r = client.post(
                "/api/v2/generate/scenes",
                json={"product_uuid": product["uuid"], "num_scenes": 1},
                headers={**key, "X-Request-ID": f"rq-job-{n}"},
            )
            assert r.status_code == 202, r.text
            job_id = r.json()["job_id"]
            jobs.append(job_id)

            def finished(job_id: str = job_id) -> bool:
                status = client.get(f"/api/v2/jobs/{job_id}", headers=key).json()["status"]
                return status in ("completed", "failed")

            wait_until(finished, timeout=120, interval=0.3)
            assert client.get(f"/api/v2/jobs/{job_id}", headers=key).json()["status"] == "completed"
        unauthorized = client.get("/metrics")
        assert unauthorized.status_code == 401
        scraped = parse(client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text)
    # The child that ran the second job is being replaced: scrape its successor.
    wait_until(lambda: up(worker_url), timeout=120, interval=0.3)
    worker = parse(
        httpx.get(worker_url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30).text
    )
    assert httpx.get(worker_url, timeout=30).status_code == 401

    # The API: every request of both processes, whichever answered the scrape.
    reads = {"route": "/api/v2/account", "method": "GET", "status": "200"}
    assert value(scraped, "pixelmill_http_requests_total", **reads) == ACCOUNT_READS
    created = {"route": "/api/v2/generate/scenes", "method": "POST", "status": "202"}
    assert value(scraped, "pixelmill_http_requests_total", **created) == 2
    counters = list(Path(str(processes["api_dir"])).glob("counter_*.db"))
    assert len({path.stem.split("_")[1] for path in counters}) >= 2  # two processes counted
    assert {s[0] for s in scraped} >= {"pixelmill_queue_depth", "pixelmill_process_cpu_seconds"}

    # The worker: both jobs, counted across its children (recycled after a task).
    assert value(worker, "pixelmill_jobs_total", kind="scenes", status="completed") == 2
    assert value(worker, "pixelmill_operation_duration_seconds_count", operation="scenes") == 2
    assert value(worker, "pixelmill_credits_charged_total", operation="scenes") == 2
    worker_log = logs["worker"].read_text()
    # A task already taken during the warm shutdown still runs there; then a fresh child.
    assert "is recycled after 1 tasks" in worker_log, worker_log[-3000:]
    assert "recycled; starting a fresh one" in worker_log, worker_log[-3000:]
    records = [json.loads(line) for line in worker_log.splitlines() if line.startswith("{")]
    for n, job_id in enumerate(jobs):
        done = [r for r in records if r["message"] == f"job {job_id} completed"]
        assert done and done[0]["request_id"] == f"rq-job-{n}" and done[0]["job_id"] == job_id

    if not TRACING:
        return

    # One trace from the request that created a job to the worker that ran it.
    def traces(name: str) -> set[str]:
        return {s["traceId"] for s in list(receiver.spans) if name in s["name"]}

    # Each process exports in batches: wait until both sides of a job's trace have arrived.
    def joined() -> bool:
        jobs = {s["traceId"] for s in list(receiver.spans) if s["name"] == "job"}
        return bool(jobs) and jobs <= traces("/api/v2/generate/scenes")

    wait_until(joined, timeout=30, interval=0.2)
