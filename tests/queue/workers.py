"""Real ``pixelmill worker`` processes for the Celery tests (same database and data dir as the
test's server side, a queue name of their own on the real Redis)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pixelmill.config import Settings

ROOT = Path(__file__).resolve().parents[2]
PIXELMILL = ROOT / ".venv" / "bin" / "pixelmill"


def worker_env(settings: Settings) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIXELMILL_")}
    env.update(
        {
            "PIXELMILL_ENV": settings.env,
            "PIXELMILL_SECRET_KEY": settings.resolved_secret_key,
            "PIXELMILL_DATABASE_URL": settings.resolved_database_url,
            "PIXELMILL_DATA_DIR": str(settings.data_dir),
            "PIXELMILL_QUEUE": "celery",
            "PIXELMILL_REDIS_URL": str(settings.redis_url),
            "PIXELMILL_CELERY_QUEUE": settings.celery_queue,
            "PIXELMILL_SCENE_SIZE": str(settings.scene_size),
            "PIXELMILL_ALLOW_LOOPBACK_URLS": "true" if settings.allow_loopback_urls else "false",
            "PIXELMILL_WEBHOOK_RETRY_BASE_SECONDS": str(settings.webhook_retry_base_seconds),
            "PIXELMILL_JOB_LEASE_SECONDS": str(settings.job_lease_seconds),
            # The test drives the sweeper itself.
            "PIXELMILL_SWEEP_INTERVAL_SECONDS": "3600",
        }
    )
    return env


def start_worker(
    settings: Settings, log_path: Path, concurrency: int = 1
) -> subprocess.Popen[bytes]:
    log = log_path.open("ab")
    executable = str(PIXELMILL) if PIXELMILL.exists() else sys.executable
    args = [executable] if PIXELMILL.exists() else [executable, "-m", "pixelmill"]
    return subprocess.Popen(
        [*args, "worker", "--concurrency", str(concurrency)],
        env=worker_env(settings),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        cwd=str(ROOT),
    )


def kill(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
        proc.wait(timeout=30)


@contextmanager
def celery_workers(
    settings: Settings, log_path: Path, count: int = 1
) -> Iterator[list[subprocess.Popen[bytes]]]:
    procs = [start_worker(settings, log_path) for _ in range(count)]
    try:
        yield procs
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    kill(proc)
