"""What the HTTP benchmarks share: a free loopback port, a fresh data directory's settings, an
enterprise account made with the real `pixelmill` commands, and a uvicorn server started on it."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_up(url: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not come up")


def server_env(work: Path, **extra: str) -> dict[str, str]:
    """The environment of a server on a fresh SQLite data directory under ``work``, with the
    enterprise plan's rate limit out of the way."""
    return {
        **os.environ,
        "PIXELMILL_DATA_DIR": str(work / "data"),
        "PIXELMILL_ENTERPRISE_REQUESTS_PER_MINUTE": str(10**9),
        "PIXELMILL_READS_PER_MINUTE": str(10**9),  # reads have their own allowance
        **extra,
    }


def _pixelmill(env: dict[str, str], *args: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "pixelmill", *args],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def enterprise_account(env: dict[str, str], email: str, credits: int = 0) -> str:
    """Migrate, create ``email`` on the enterprise plan with ``credits`` more; its API key."""
    _pixelmill(env, "migrate")
    created = _pixelmill(env, "admin", "create-user", email, "--password", "bench-password")
    key = re.search(r"(pk_live_\S+)", created)
    if key is None:
        raise RuntimeError(f"no API key in: {created}")
    _pixelmill(env, "admin", "set-plan", email, "enterprise")
    if credits:
        _pixelmill(env, "admin", "grant-credits", email, str(credits))
    return key.group(1)


def start_uvicorn(
    app: str, port: int, env: dict[str, str], cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """``app`` (``module:attribute``) under one uvicorn process on 127.0.0.1:``port``."""
    return subprocess.Popen(
        [sys.executable, "-m", "uvicorn", app, "--port", str(port), "--log-level", "warning"],
        env=env,
        cwd=cwd,
    )


def start_pixelmill_serve(
    port: int, env: dict[str, str], log_file: Path | None = None
) -> subprocess.Popen[bytes]:
    """``pixelmill serve`` as users start it (one worker, its own logging), its output to
    ``log_file`` (else discarded)."""
    out = open(log_file, "wb") if log_file is not None else subprocess.DEVNULL  # noqa: SIM115
    return subprocess.Popen(
        [sys.executable, "-m", "pixelmill", "serve", "--port", str(port)],
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
    )
