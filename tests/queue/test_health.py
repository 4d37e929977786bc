"""Issue #61: ``pixelmill worker-health``, the worker's compose healthcheck and Kubernetes
liveness probe, run as those run it (the command, its exit status) against a real ``pixelmill
worker`` and a real ``redis-server`` of the test's own on loopback (killed at the end: the
suite's shared Redis is never touched). It passes while the worker answers, and fails for a
worker that is stopped (SIGSTOP: a wedged process) or that cannot reach its broker."""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pixelmill.config import Settings
from pixelmill.queue.health import check_worker, redacted
from tests.multinode.cluster import Cluster, Node
from tests.queue.workers import PIXELMILL, worker_env
from tests.support.services import IN_CI
from tests.support.settings import job_settings


@dataclass
class Stack:
    redis: Node
    worker: Node
    env: dict[str, str]


def health(env: dict[str, str], timeout: float = 3.0) -> subprocess.CompletedProcess[str]:
    """The probe's command line, as compose and Kubernetes run it."""
    return subprocess.run(
        [str(PIXELMILL), "worker-health", "--timeout", str(timeout)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def stack(database_url: str, tmp_path: Path) -> Iterator[Stack]:
    if shutil.which("redis-server") is None:
        message = "redis-server is not installed: this test runs a Redis of its own"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    cluster = Cluster(tmp_path, {})
    broker = cluster.redis()
    broker.start()
    try:
        cluster.wait_ready(broker, timeout=20)
        settings: Settings = job_settings(
            database_url,
            tmp_path / "data",
            queue="celery",
            redis_url=f"redis://127.0.0.1:{broker.port}/0",
            celery_queue=f"pixelmill-health-{uuid.uuid4().hex[:8]}",
        )
        cluster.env = worker_env(settings)
        worker = cluster.worker("worker")
        worker.start()
        cluster.wait_ready(worker, timeout=120)
        yield Stack(broker, worker, cluster.env)
    finally:
        cluster.stop()


@pytest.mark.postgres
def test_the_health_check_follows_the_worker_and_its_broker(stack: Stack) -> None:
    started = time.monotonic()
    ok = health(stack.env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.startswith("healthy: pixelmill-"), ok.stdout
    passed_in = time.monotonic() - started

    # Wedged: the process is there, its consumer does not answer.
    stack.worker.pause()
    try:
        wedged = health(stack.env, timeout=2.0)
    finally:
        stack.worker.resume()
    assert wedged.returncode == 1, wedged.stdout
    assert "no pixelmill worker on" in wedged.stdout and "answered" in wedged.stdout

    again = health(stack.env)
    assert again.returncode == 0, again.stdout

    # Cut off from its broker: the worker process lives on (it reconnects by itself once the
    # broker is back), but it can take no work, and the check says so.
    stack.redis.sigkill()
    assert stack.worker.alive()
    cut_off = health(stack.env, timeout=2.0)
    assert cut_off.returncode == 1, cut_off.stdout
    assert "unhealthy: the broker at redis://127.0.0.1:" in cut_off.stdout
    print(f"[worker-health] healthy answer in {passed_in:.1f} s (process start included)")


def test_the_check_needs_the_celery_queue_and_hides_the_broker_password() -> None:
    inline = check_worker(Settings(queue="inline"))
    assert not inline.healthy and "PIXELMILL_QUEUE=celery" in inline.detail
    assert redacted("redis://:s3cret@redis:6379/0") == "redis://:***@redis:6379/0"
    assert redacted("redis://user:s3cret@redis/0") == "redis://user:***@redis/0"
    assert redacted("redis://redis:6379/0") == "redis://redis:6379/0"
    # Nothing listens on port 1: the broker does not answer, whatever the password.
    down = check_worker(
        Settings(queue="celery", redis_url="redis://:s3cret@127.0.0.1:1/0"), timeout=1.0
    )
    assert not down.healthy and "does not answer" in down.detail
    assert "s3cret" not in down.detail
