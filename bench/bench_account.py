"""Throughput and latency of an authenticated read, beside a bare FastAPI route.

Starts real servers (one worker each) on 127.0.0.1: pixelmill on a fresh SQLite database, and a
bare FastAPI app returning a constant under uvicorn. ``wrk`` (Debian package ``wrk``) then
drives ``GET /api/v2/account`` with an API key (key hash lookup, the read allowance's bucket, one
SQLite read, JSON response) and the bare route, with 50 concurrent connections each, in the same
run.

pixelmill runs under the bench's own uvicorn command, and (``--serve``) as users start it,
``pixelmill serve``; ``--observability`` adds a ``pixelmill serve`` with
``PIXELMILL_METRICS=true`` and ``PIXELMILL_LOG_FORMAT=json`` (its log lines to a file), the
setting issues 45 and 60 hold to at least 0.5x the bare route (0.70-0.71x measured for issue 60,
both settings, load average 2-4 on 2 cores).

    .venv/bin/python bench/bench_account.py [--seconds 15] [--connections 50] [--serve]
        [--observability]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _server import (
    enterprise_account,
    free_port,
    server_env,
    start_pixelmill_serve,
    start_uvicorn,
    wait_up,
)

BARE_APP = """
from fastapi import FastAPI
app = FastAPI()
@app.get("/const")
def const() -> dict[str, str]:
    return {"status": "ok"}
"""


BARE = "bare FastAPI GET /const"
PIXELMILL = "pixelmill GET /api/v2/account (API key)"
SERVE = "pixelmill serve, GET /api/v2/account"
OBSERVED = "pixelmill serve + metrics + JSON logs"


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (all its threads) so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_wrk(
    url: str, seconds: int, connections: int, headers: dict[str, str], pid: int
) -> dict[str, float]:
    """One wrk run; with the server's CPU time per request answered (steadier than req/s on a
    machine shared with other work: time the server waited for a core does not count)."""
    cmd = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", url]
    for k, v in headers.items():
        cmd += ["-H", f"{k}: {v}"]
    before = cpu_seconds(pid)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    cpu = cpu_seconds(pid) - before
    answered = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]

    def latency(pct: str) -> float:
        m = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not m:
            raise RuntimeError(out)
        value, unit = float(m.group(1)), m.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return {
        "rps": rps,
        "p50_ms": latency("50"),
        "p99_ms": latency("99"),
        "non_2xx": float(non2xx.group(1)) if non2xx else 0.0,
        "cpu_us": 1e6 * cpu / max(1, answered),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--serve", action="store_true", help="pixelmill as `pixelmill serve`")
    parser.add_argument(
        "--observability", action="store_true", help="also pixelmill serve with metrics + JSON"
    )
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install wrk")

    work = Path(tempfile.mkdtemp(prefix="pm-bench-"))
    (work / "bare_app.py").write_text(BARE_APP)
    env = server_env(work)
    key = enterprise_account(env, "bench@example.com")
    bare_port = free_port()
    servers = [start_uvicorn("bare_app:app", bare_port, env, cwd=work)]
    targets: dict[str, str] = {}  # name -> URL
    pids: dict[str, int] = {BARE: servers[0].pid}
    pm_port = free_port()
    servers.append(start_uvicorn("pixelmill.asgi:app", pm_port, env))
    targets[PIXELMILL] = f"http://127.0.0.1:{pm_port}"
    pids[PIXELMILL] = servers[-1].pid
    if args.serve:
        serve_port = free_port()
        servers.append(start_pixelmill_serve(serve_port, env))
        targets[SERVE] = f"http://127.0.0.1:{serve_port}"
        pids[SERVE] = servers[-1].pid
    log_file = work / "json.log"
    if args.observability:
        observed_port = free_port()
        observed_env = {**env, "PIXELMILL_METRICS": "true", "PIXELMILL_LOG_FORMAT": "json"}
        servers.append(start_pixelmill_serve(observed_port, observed_env, log_file))
        targets[OBSERVED] = f"http://127.0.0.1:{observed_port}"
        pids[OBSERVED] = servers[-1].pid
    try:
        wait_up(f"http://127.0.0.1:{bare_port}/const")
        for base in targets.values():
            wait_up(f"{base}/healthz")
        # Alternate the servers (3 rounds each) so a change in the machine's load hits
        # all alike; the ratio is of the summed request rates.
        bare_url = f"http://127.0.0.1:{bare_port}/const"
        auth = {"Authorization": f"Bearer {key}"}
        rounds: dict[str, list[dict[str, float]]] = {BARE: [], **{name: [] for name in targets}}
        for _ in range(args.rounds):
            rounds[BARE].append(run_wrk(bare_url, args.seconds, args.connections, {}, pids[BARE]))
            for name, base in targets.items():
                url = f"{base}/api/v2/account"
                rounds[name].append(run_wrk(url, args.seconds, args.connections, auth, pids[name]))
        if args.observability:
            lines = log_file.read_text().splitlines()
            access = [line for line in lines if '"pixelmill.access"' in line]
            print(f"JSON log: {len(lines)} lines, {len(access)} access lines; last: {access[-1]}")
        results = {
            name: {
                "rps": sum(r["rps"] for r in rs) / len(rs),
                "p50_ms": sorted(r["p50_ms"] for r in rs)[len(rs) // 2],
                "p99_ms": max(r["p99_ms"] for r in rs),
                "non_2xx": sum(r["non_2xx"] for r in rs),
                "cpu_us": sorted(r["cpu_us"] for r in rs)[len(rs) // 2],
            }
            for name, rs in rounds.items()
        }
    finally:
        for s in servers:
            s.terminate()
            s.wait(10)
        shutil.rmtree(work, ignore_errors=True)

    print(
        f"{args.connections} connections, {args.seconds} s each, "
        f"1 uvicorn worker, {os.cpu_count()} cores"
    )
    head = f"{'route':44} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8}"
    print(f"{head} {'CPU us/req':>10}")
    for name, r in results.items():
        times = f"{r['p50_ms']:8.1f} {r['p99_ms']:8.1f}"
        print(f"{name:44} {r['rps']:9.0f} {times} {r['non_2xx']:8.0f} {r['cpu_us']:10.0f}")
    for name in targets:
        ratio = results[name]["rps"] / results[BARE]["rps"]
        by_cpu = results[BARE]["cpu_us"] / results[name]["cpu_us"]
        print(
            f"ratio ({name} / bare): {ratio:.2f}x by req/s, {by_cpu:.2f}x by CPU per request "
            "(target >= 0.5x)"
        )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
