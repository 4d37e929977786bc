"""Memory and waiting under a burst of background removals.

Starts a real uvicorn server (one worker) on 127.0.0.1 on a fresh SQLite data dir, with an
enterprise account holding enough credits, then fires N concurrent ``POST
/api/v2/remove-background`` requests (a 1 MP JPEG as base64; ``--surface v1`` sends it as a
multipart upload to ``/api/v1/remove-background``) with httpx/asyncio. The server's RSS is
sampled from ``/proc/<pid>/status`` every 50 ms. Prints the idle RSS (after a warm-up request),
the peak during the burst, the RSS 10 s after the last answer, the longest wait, and the counts
of 200, 503 (with ``Retry-After``) and anything else.

    .venv/bin/python bench/bench_burst.py [--requests 360] [--rounds 1] [--surface v2|v1]

Targets (issue 21): peak < 1.2 GB, after-10s within 20 % of idle, longest wait <= 60 s, no 5xx
other than 503 + Retry-After. Extra server settings can be passed as ``--env NAME=VALUE``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import cv2
import httpx
import numpy as np
from skimage import data

from _server import enterprise_account, free_port, server_env, start_uvicorn, wait_up

CREDITS = 1_000_000


def rss_bytes(pid: int) -> int:
    """Resident set size of ``pid`` and its children (uvicorn runs the app in-process)."""
    text = Path(f"/proc/{pid}/status").read_text()
    m = re.search(r"^VmRSS:\s+(\d+) kB", text, re.M)
    return int(m.group(1)) * 1024 if m else 0


class Sampler:
    """Samples a process's RSS every ``interval`` seconds on a thread; ``peak`` since reset."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, rss_bytes(self.pid))
            except OSError:
                return
            self._stop.wait(self.interval)

    def reset(self) -> None:
        self.peak = rss_bytes(self.pid)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def biggest_mappings(pid: int, top: int = 8) -> list[tuple[str, float]]:
    """The resident MB of ``pid``'s mappings grouped by what they map ([heap], anonymous, a
    library), largest first (``--smaps``)."""
    sizes: dict[str, int] = {}
    name = ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if "-" in head[0] and not head[0].endswith(":"):
            name = head[5] if len(head) > 5 else "[anon]"
        elif head[0] == "Rss:":
            sizes[name] = sizes.get(name, 0) + int(head[1]) * 1024
    ranked = sorted(sizes.items(), key=lambda kv: -kv[1])[:top]
    return [(n, b / 1e6) for n, b in ranked]


def one_mp_jpeg() -> bytes:
    rgb = np.ascontiguousarray(data.astronaut())  # type: ignore[no-untyped-call]
    h, w = rgb.shape[:2]
    f = (1e6 / (h * w)) ** 0.5
    big = cv2.resize(rgb, (round(w * f), round(h * f)), interpolation=cv2.INTER_CUBIC)
    ok, buf = cv2.imencode(
        ".jpg", cv2.cvtColor(big, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 90]
    )
    assert ok
    return buf.tobytes()


async def one_request(
    client: httpx.AsyncClient, surface: str, jpeg: bytes, b64: str
) -> tuple[int, float, str | None]:
    started = time.perf_counter()
    try:
        if surface == "v1":
            r = await client.post(
                "/api/v1/remove-background", files={"file": ("a.jpg", jpeg, "image/jpeg")}
            )
        else:
            r = await client.post("/api/v2/remove-background", json={"image_base64": b64})
        status, retry = r.status_code, r.headers.get("retry-after")
    except httpx.HTTPError as exc:
        status, retry = -1, type(exc).__name__
    return status, time.perf_counter() - started, retry


async def burst(base: str, key: str, n: int, surface: str, jpeg: bytes) -> list[Any]:
    b64 = base64.b64encode(jpeg).decode()
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    async with httpx.AsyncClient(
        base_url=base,
        headers={"Authorization": f"Bearer {key}"},
        timeout=httpx.Timeout(600.0),
        limits=limits,
    ) as client:
        return await asyncio.gather(*(one_request(client, surface, jpeg, b64) for _ in range(n)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=360)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--surface", choices=["v2", "v1"], default="v2")
    parser.add_argument("--settle", type=float, default=10.0)
    parser.add_argument(
        "--warmup",
        type=int,
        default=os.cpu_count() or 1,
        help="concurrent requests before idle is measured (default: one per CPU worker)",
    )
    parser.add_argument("--smaps", action="store_true", help="print the largest mappings")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="pm-burst-"))
    env = server_env(work, **dict(kv.split("=", 1) for kv in args.env))
    key = enterprise_account(env, "burst@example.com", credits=CREDITS)

    jpeg = one_mp_jpeg()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_uvicorn("pixelmill.asgi:app", port, env)
    rows: list[dict[str, Any]] = []
    try:
        wait_up(f"{base}/healthz")
        # Warm-up first: the model is loaded and every CPU worker has run once before "idle".
        warm = asyncio.run(burst(base, key, args.warmup, args.surface, jpeg))
        if any(status != 200 for status, _, _ in warm):
            sys.exit(f"warm-up requests answered {[status for status, _, _ in warm]}")
        time.sleep(args.settle)
        if args.smaps:
            print("idle:", biggest_mappings(server.pid))
        sampler = Sampler(server.pid)
        for round_no in range(1, args.rounds + 1):
            idle = rss_bytes(server.pid)
            sampler.reset()
            started = time.perf_counter()
            results = asyncio.run(burst(base, key, args.requests, args.surface, jpeg))
            elapsed = time.perf_counter() - started
            peak = sampler.peak
            time.sleep(args.settle)
            after = rss_bytes(server.pid)
            if args.smaps:
                print(f"after round {round_no}:", biggest_mappings(server.pid))
            statuses = [s for s, _, _ in results]
            refused = [r for r in results if r[0] == 503]
            rows.append(
                {
                    "round": round_no,
                    "requests": args.requests,
                    "idle_mb": idle / 1e6,
                    "peak_mb": peak / 1e6,
                    "after_mb": after / 1e6,
                    "after_vs_idle": after / idle,
                    "max_wait_s": max(t for _, t, _ in results),
                    "max_wait_200_s": max((t for s, t, _ in results if s == 200), default=0.0),
                    "max_wait_503_s": max((t for _, t, _ in refused), default=0.0),
                    "burst_s": elapsed,
                    "ok": statuses.count(200),
                    "busy_503": len(refused),
                    "busy_503_without_retry_after": sum(1 for r in refused if r[2] is None),
                    "other": len(statuses) - statuses.count(200) - len(refused),
                    "other_statuses": sorted({s for s in statuses if s not in (200, 503)}),
                }
            )
        sampler.stop()
        balance = json.loads(
            urllib.request.urlopen(
                urllib.request.Request(
                    f"{base}/api/v2/account", headers={"Authorization": f"Bearer {key}"}
                )
            ).read()
        )
    finally:
        server.terminate()
        server.wait(15)
        shutil.rmtree(work, ignore_errors=True)

    print(
        f"{args.requests} concurrent {args.surface} remove-background, 1 MP JPEG "
        f"({len(jpeg) / 1e3:.0f} kB), 1 uvicorn worker, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{'round':>5} {'idle MB':>8} {'peak MB':>8} {'+10s MB':>8} {'+10s/idle':>9} "
        f"{'max wait s':>10} {'200':>5} {'503':>5} {'other':>5}"
    )
    for r in rows:
        print(
            f"{r['round']:5d} {r['idle_mb']:8.0f} {r['peak_mb']:8.0f} {r['after_mb']:8.0f} "
            f"{r['after_vs_idle']:9.2f} {r['max_wait_s']:10.1f} {r['ok']:5d} {r['busy_503']:5d} "
            f"{r['other']:5d}"
        )
    print("targets: peak < 1200 MB, +10s/idle <= 1.20, max wait <= 60 s, other == 0")
    print(json.dumps({"rounds": rows, "account": balance}, default=str))


if __name__ == "__main__":
    main()
