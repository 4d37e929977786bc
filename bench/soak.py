"""Soak: a bounded mix of real requests at a fixed concurrency against a live server, with the
resident memory of every process sampled throughout.

Starts ``pixelmill serve`` on a fresh SQLite data directory (and, with ``--redis``, the Celery
queue and one ``pixelmill worker``; else jobs run in the server's own pool), makes an
enterprise account with credits, then sends ``--requests`` requests from ``--concurrency``
threads in a fixed repeating mix: authenticated reads (``GET /api/v2/account``), background
removal, upscale, text removal, and a scene job every ``--scene-every`` requests. It reports
each process's RSS at the end of the warm-up (``--warmup`` requests) and at the end, the drift
between them, p50/p95 latency per kind, and every error; ``--json`` writes the same as JSON.

    .venv/bin/python bench/soak.py [--requests 10000] [--concurrency 8] [--warmup 1000]
        [--redis redis://127.0.0.1:6379/0] [--json soak.json]

Exit status 1 when any request was answered 5xx or failed to connect, or a job failed.
"""

from __future__ import annotations

import argparse
import base64
import io
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from PIL import Image

from _server import enterprise_account, free_port, server_env, start_pixelmill_serve, wait_up

MIX = (
    *("read",) * 8,
    "background",
    *("read",) * 8,
    "upscale",
    *("read",) * 8,
    "text",
)
"""One turn of the mix (repeated): 8 authenticated reads per image operation, the three image
operations in turn (a 10,000-request soak is about 1,100 image operations)."""

PATHS = {
    "background": "/api/v2/remove-background",
    "upscale": "/api/v2/upscale",
    "text": "/api/v2/remove-text",
}


def photo(width: int = 192, height: int = 144, seed: int = 7) -> str:
    """A small synthetic photo (a lit object with a caption on a gradient) as base64 PNG."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    image = np.zeros((height, width, 3), np.float64)
    image[..., 0] = 90 + 80 * x / width
    image[..., 1] = 120 + 60 * y / height
    image[..., 2] = 160
    inside = ((x - width / 2) / (width / 4)) ** 2 + ((y - height / 2) / (height / 3)) ** 2 < 1
    image[inside] = (200, 60, 40)
    image += rng.normal(0, 4, image.shape)
    pixels = np.clip(image, 0, 255).astype(np.uint8)
    pixels[height - 22 : height - 12, 20 : width - 20] = 250  # a caption-like light band
    pixels[height - 20 : height - 14, 24 : width - 24 : 6] = 10
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def process_tree(root: int) -> list[int]:
    """``root`` and every process below it (``/proc/<pid>/task/*/children``)."""
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/children") as fh:
                    stack.extend(int(c) for c in fh.read().split())
            except OSError:
                pass
    return found


def command_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            parts = fh.read().split(b"\0")
    except OSError:
        return "?"
    words = [p.decode(errors="replace") for p in parts if p]
    short = [w for w in words if not w.startswith("/") or w.endswith("pixelmill")]
    return " ".join(short[:4]) or " ".join(words[:3])


@dataclass
class Soak:
    done: int = 0
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, dict[int, int]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(int))
    )
    errors: list[str] = field(default_factory=list)
    unanswered: int = 0
    jobs: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    names: dict[int, str] = field(default_factory=dict)
    # pid -> [(requests done, rss bytes)]
    samples: dict[int, list[tuple[int, int]]] = field(default_factory=lambda: defaultdict(list))


def sample(soak: Soak, roots: list[int], stop: threading.Event, interval: float) -> None:
    while not stop.is_set():
        with soak.lock:
            done = soak.done
        for root in roots:
            for pid in process_tree(root):
                value = rss_bytes(pid)
                if pid not in soak.names:
                    soak.names[pid] = command_of(pid)
                if value:
                    soak.samples[pid].append((done, value))
        stop.wait(interval)


def one(client: httpx.Client, soak: Soak, n: int, kind: str, image: str, product: str) -> None:
    started = time.perf_counter()
    try:
        if kind == "read":
            r = client.get("/api/v2/account")
        elif kind == "scene":
            r = client.post(
                "/api/v2/generate/scenes",
                json={"product_uuid": product, "num_scenes": 1},
                headers={"X-Request-ID": f"soak-{n}"},
            )
        else:
            body: dict[str, Any] = {"image_base64": image}
            if kind == "upscale":
                body["scale"] = 2
            r = client.post(PATHS[kind], json=body)
    except httpx.HTTPError as exc:
        with soak.lock:
            soak.errors.append(f"{kind} #{n}: {type(exc).__name__}: {exc}")
            soak.unanswered += 1
            soak.done += 1
        return
    elapsed = time.perf_counter() - started
    with soak.lock:
        soak.done += 1
        soak.latencies[kind].append(elapsed)
        soak.statuses[kind][r.status_code] += 1
        if r.status_code >= 400:
            soak.errors.append(f"{kind} #{n}: HTTP {r.status_code} {r.text[:200]}")
        elif kind == "scene":
            soak.jobs.append(r.json()["job_id"])


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def drift_report(soak: Soak, warmup: int) -> list[dict[str, Any]]:
    rows = []
    for pid, points in sorted(soak.samples.items()):
        if len(points) < 2:
            continue
        after = [rss for done, rss in points if done >= warmup]
        if not after:
            continue
        # The RSS once the warm-up is over (median of the first samples past it, so one
        # sample taken mid-request does not decide) against the last samples.
        at_warm = statistics.median(after[:5])
        at_end = statistics.median(after[-5:])
        rows.append(
            {
                "pid": pid,
                "process": soak.names.get(pid, "?"),
                "rss_after_warmup_mb": round(at_warm / 2**20, 1),
                "rss_end_mb": round(at_end / 2**20, 1),
                "rss_max_mb": round(max(rss for _, rss in points) / 2**20, 1),
                "drift_pct": round(100 * (at_end - at_warm) / at_warm, 2),
            }
        )
    return rows


def wait_jobs(client: httpx.Client, jobs: list[str], timeout: float) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    final: dict[str, str] = {}
    while time.monotonic() < deadline and len(final) < len(jobs):
        for job in jobs:
            if job not in final:
                status = client.get(f"/api/v2/jobs/{job}").json()["status"]
                if status in ("completed", "failed"):
                    final[job] = status
        time.sleep(0.5)
    counts: dict[str, int] = defaultdict(int)
    for job in jobs:
        counts[final.get(job, "unfinished")] += 1
    return dict(counts)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=None, help="default: a tenth")
    parser.add_argument("--scene-every", type=int, default=100)
    parser.add_argument("--redis", default=None, help="Celery on this Redis, with one worker")
    parser.add_argument("--sample-seconds", type=float, default=0.5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    warmup = args.warmup if args.warmup is not None else max(1, args.requests // 10)

    work = Path(tempfile.mkdtemp(prefix="pm-soak-"))
    extra = {
        "PIXELMILL_SCENE_SIZE": "256",
        "PIXELMILL_ANALYZE_PRODUCTS": "false",
        "PIXELMILL_LOG_FORMAT": "json",
        "PIXELMILL_METRICS": "true",
    }
    if args.redis:
        extra |= {
            "PIXELMILL_QUEUE": "celery",
            "PIXELMILL_REDIS_URL": args.redis,
            "PIXELMILL_CELERY_QUEUE": f"pixelmill-soak-{uuid.uuid4().hex[:8]}",
        }
    env = server_env(work, **extra)
    credits = args.requests * 3
    key = enterprise_account(env, "soak@example.com", credits=credits)
    port = free_port()
    procs = [start_pixelmill_serve(port, env, work / "server.log")]
    if args.redis:
        with (work / "worker.log").open("wb") as out:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "pixelmill", "worker", "--concurrency", "2"],
                    env={**env, "PIXELMILL_WORKER_METRICS_PORT": str(free_port())},
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            )
    base = f"http://127.0.0.1:{port}"
    soak = Soak()
    stop = threading.Event()
    try:
        wait_up(f"{base}/healthz")
        headers = {"Authorization": f"Bearer {key}"}
        limits = httpx.Limits(max_connections=args.concurrency * 2)
        with httpx.Client(base_url=base, headers=headers, timeout=120, limits=limits) as client:
            image = photo()
            product = client.post(
                "/api/v2/products", json={"image": image, "filename": "soak.png"}
            ).json()["uuid"]
            sampler = threading.Thread(
                target=sample,
                args=(soak, [p.pid for p in procs], stop, args.sample_seconds),
                daemon=True,
            )
            sampler.start()
            kinds = itertools.cycle(MIX)
            plan = [
                "scene"
                if args.scene_every and n % args.scene_every == args.scene_every - 1
                else next(kinds)
                for n in range(args.requests)
            ]
            started = time.perf_counter()
            with ThreadPoolExecutor(args.concurrency) as pool:
                for n, kind in enumerate(plan):
                    pool.submit(one, client, soak, n, kind, image, product)
            wall = time.perf_counter() - started
            jobs = wait_jobs(client, soak.jobs, timeout=300)
            time.sleep(args.sample_seconds * 3)  # a last few samples at rest
    finally:
        stop.set()
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()

    five_xx = sum(n for s in soak.statuses.values() for code, n in s.items() if code >= 500)
    report = {
        "requests": args.requests,
        "concurrency": args.concurrency,
        "warmup": warmup,
        "wall_seconds": round(wall, 1),
        "requests_per_second": round(args.requests / wall, 1),
        "cores": os.cpu_count(),
        "queue": "celery" if args.redis else "inline",
        "kinds": {
            kind: {
                "count": len(values),
                "p50_ms": round(1000 * percentile(values, 0.5), 1),
                "p95_ms": round(1000 * percentile(values, 0.95), 1),
                "statuses": dict(soak.statuses[kind]),
            }
            for kind, values in sorted(soak.latencies.items())
        },
        "jobs": jobs,
        "five_xx": five_xx,
        "errors": soak.errors[:50],
        "error_count": len(soak.errors),
        "unanswered": soak.unanswered,
        "processes": drift_report(soak, warmup),
    }
    shutil.rmtree(work, ignore_errors=True)

    print(
        f"{args.requests} requests, concurrency {args.concurrency}, {wall:.1f} s "
        f"({report['requests_per_second']} req/s), {os.cpu_count()} cores, {report['queue']} queue"
    )
    print(f"{'kind':12} {'count':>7} {'p50 ms':>9} {'p95 ms':>9}  statuses")
    for kind, row in report["kinds"].items():
        times = f"{row['p50_ms']:9.1f} {row['p95_ms']:9.1f}"
        print(f"{kind:12} {row['count']:7} {times}  {row['statuses']}")
    print(f"jobs: {jobs}; 5xx: {five_xx}; errors: {len(soak.errors)}")
    print(f"RSS after the first {warmup} requests -> at the end:")
    for row in report["processes"]:
        print(
            f"  pid {row['pid']:>7} {row['process'][:40]:40} {row['rss_after_warmup_mb']:8.1f} MB"
            f" -> {row['rss_end_mb']:8.1f} MB ({row['drift_pct']:+.2f} %,"
            f" max {row['rss_max_mb']} MB)"
        )
    for error in soak.errors[:10]:
        print("  error:", error)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    bad_jobs = sum(n for status, n in jobs.items() if status != "completed")
    return 1 if five_xx or soak.unanswered or bad_jobs else 0


if __name__ == "__main__":
    sys.exit(main())
