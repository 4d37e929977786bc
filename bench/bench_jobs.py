"""Asynchronous work throughput (a hand-run benchmark, not a test).

Measures, through the real HTTP surface on a SQLite file:

- jobs per minute for 1-scene jobs (``POST /api/v2/generate/scenes``, ``num_scenes=1``) on the
  in-process queue and on Celery with 2 ``pixelmill worker`` processes;
- the wall time of one 100-image x 1-scene batch on both.

Time runs from the first create call until the last job (or the batch) is terminal. Scenes are
rendered at ``PIXELMILL_SCENE_SIZE`` (default 1024). Celery needs Redis on
``PIXELMILL_BENCH_REDIS_URL`` (default ``redis://127.0.0.1:6379/0``).

    .venv/bin/python bench/bench_jobs.py [--jobs 40] [--batch 100] [--size 1024]
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from fastapi.testclient import TestClient
from PIL import Image

from _common import print_table
from pixelmill.accounts import service as accounts
from pixelmill.app import create_app
from pixelmill.config import Settings
from pixelmill.credits import ledger
from pixelmill.db.migrate import upgrade
from pixelmill.resources import Resources, build_resources

ROOT = Path(__file__).resolve().parents[1]
REDIS_URL = os.environ.get("PIXELMILL_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")


def product_png(w: int = 480, h: int = 360) -> str:
    """A bottle-like subject on a light gradient (a clear product shot)."""
    y = np.linspace(0, 1, h, dtype=np.float32)[:, None]
    bg = (225 - 25 * y) * np.ones((h, w), np.float32)
    img = np.stack([bg, bg, bg + 3], axis=-1)
    cx, top, bottom, half = w // 2, h // 5, h - h // 8, w // 8
    img[top + h // 10 : bottom, cx - half : cx + half] = (40, 100, 170)
    img[top : top + h // 10, cx - half // 2 : cx + half // 2] = (200, 60, 50)
    buf = io.BytesIO()
    Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save(buf, "PNG")
    return base64.b64encode(buf.getvalue()).decode()


def make_settings(workdir: Path, queue: str, size: int) -> Settings:
    db = workdir / f"{queue}.db"
    return Settings(
        env="testing",
        secret_key="bench-" + "x" * 40,
        database_url=f"sqlite:///{db}",
        data_dir=workdir / f"data-{queue}",
        queue=queue,
        redis_url=REDIS_URL if queue == "celery" else None,
        celery_queue=f"pixelmill-bench-{uuid.uuid4().hex[:8]}",
        scene_size=size,
        sweep_interval_seconds=3600,
        # Uploads would queue seconds of product analysis beside the jobs being measured.
        analyze_products=False,
    )


def make_key(resources: Resources, credits: int) -> str:
    with resources.db.transaction() as session:
        new = accounts.register(
            session,
            resources.secret,
            f"bench-{uuid.uuid4().hex[:8]}@example.com",
            "bench password",
            free_credits=0,
        )
        ledger.grant(session, new.user.id, credits, memo="bench")
        accounts.set_plan(session, new.user, "enterprise")
        return new.api_key


@contextmanager
def workers(settings: Settings, count: int) -> Iterator[None]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIXELMILL_")}
    env.update(
        {
            "PIXELMILL_ENV": "testing",
            "PIXELMILL_SECRET_KEY": settings.resolved_secret_key,
            "PIXELMILL_DATABASE_URL": settings.resolved_database_url,
            "PIXELMILL_DATA_DIR": str(settings.data_dir),
            "PIXELMILL_QUEUE": "celery",
            "PIXELMILL_REDIS_URL": REDIS_URL,
            "PIXELMILL_CELERY_QUEUE": settings.celery_queue,
            "PIXELMILL_SCENE_SIZE": str(settings.scene_size),
            "PIXELMILL_SWEEP_INTERVAL_SECONDS": "3600",
        }
    )
    log = (settings.data_dir / "workers.log").open("ab")
    procs = [
        subprocess.Popen(
            [str(ROOT / ".venv/bin/pixelmill"), "worker", "--concurrency", "1"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        for _ in range(count)
    ]
    try:
        yield
    finally:
        for proc in procs:
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            proc.wait(timeout=60)


def wait_all(client: TestClient, headers: dict[str, str], paths: list[str], key: str) -> None:
    pending = list(paths)
    while pending:
        pending = [
            p
            for p in pending
            if client.get(p, headers=headers).json()["status"] not in ("completed", "failed")
        ]
        if pending:
            time.sleep(0.2)


def run_jobs(client: TestClient, headers: dict[str, str], n: int) -> float:
    product = client.post(
        "/api/v2/products",
        json={"image": product_png(), "filename": "bottle.png"},
        headers=headers,
    ).json()
    start = time.perf_counter()
    paths = []
    for _ in range(n):
        r = client.post(
            "/api/v2/generate/scenes",
            json={"product_uuid": product["uuid"], "num_scenes": 1},
            headers=headers,
        )
        r.raise_for_status()
        paths.append(f"/api/v2/jobs/{r.json()['job_id']}")
    wait_all(client, headers, paths, "status")
    return time.perf_counter() - start


def run_batch(client: TestClient, headers: dict[str, str], n: int) -> float:
    image = product_png()
    body: dict[str, Any] = {
        "images": [{"id": f"sku-{i}", "image": image} for i in range(n)],
        "images_per_product": 1,
    }
    start = time.perf_counter()
    r = client.post("/api/v2/batches", json=body, headers=headers)
    r.raise_for_status()
    wait_all(client, headers, [f"/api/v2/batches/{r.json()['batch_id']}"], "status")
    return time.perf_counter() - start


def bench(queue: str, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    settings = make_settings(workdir, queue, args.size)
    upgrade(settings.resolved_database_url)
    resources = build_resources(settings)
    key = make_key(resources, args.jobs + args.batch + 10)
    headers = {"Authorization": f"Bearer {key}"}
    ctx = workers(settings, 2) if queue == "celery" else _nothing()
    try:
        with ctx, TestClient(create_app(settings, resources)) as client:
            run_jobs(client, headers, 2)  # warm-up: model load, connections
            jobs_s = run_jobs(client, headers, args.jobs)
            batch_s = run_batch(client, headers, args.batch)
    finally:
        resources.close()
    label = (
        f"inline ({settings.job_workers} threads)" if queue == "inline" else "celery (2 workers)"
    )
    return {
        "queue": label,
        "1-scene jobs": args.jobs,
        "jobs/min": round(args.jobs / jobs_s * 60, 1),
        f"{args.batch}x1 batch s": round(batch_s, 1),
    }


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--queues", default="inline,celery")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-jobs-") as tmp:
        for queue in args.queues.split(","):
            rows.append(bench(queue, args, Path(tmp)))
            print(rows[-1], file=sys.stderr, flush=True)
    print(f"\nscene size {args.size} px, {os.cpu_count()} CPUs, SQLite\n")
    print_table(rows)


if __name__ == "__main__":
    main()
