"""``pixelmill serve`` says a taken port first (before migrating, the banner or loading the
application) and prints its ready line only once the server answers; the README names that
line exactly."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from pixelmill.cli import READY

ROOT = Path(__file__).resolve().parents[1]


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIXELMILL_")}
    env["PIXELMILL_DATA_DIR"] = str(tmp_path / "data")
    return env


def _serve(port: int, tmp_path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "pixelmill", "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=_env(tmp_path),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_taken_port_is_said_first_and_exits_non_zero(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        started = time.monotonic()
        proc = _serve(port, tmp_path)
        out, err = proc.communicate(timeout=60)
        elapsed = time.monotonic() - started
    assert proc.returncode == 1, (out, err)
    assert err.strip() == (
        f"pixelmill: port {port} on 127.0.0.1 is in use; choose another with --port"
    )
    assert out == ""  # no migration, no banner
    assert not (tmp_path / "data").exists()  # nothing migrated either
    assert elapsed < 30, elapsed  # (the interpreter's start only; no application loaded)


def test_the_ready_line_comes_only_once_the_server_answers(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = _serve(port, tmp_path)
    base = f"http://127.0.0.1:{port}"
    before: list[str] = []
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 120
        for line in proc.stdout:
            if line.startswith(READY):
                assert line.strip() == f"{READY}{base}"
                # Ready means ready: it answers at once.
                assert httpx.get(f"{base}/healthz", timeout=5).status_code == 200
                break
            before.append(line)
            assert time.monotonic() < deadline
        else:
            raise AssertionError(f"no ready line: {''.join(before)}")
    finally:
        proc.terminate()
        proc.wait(20)
    banner = "".join(before)
    assert "Create an account" in banner
    assert "ready on" not in banner  # a script waiting for the line never fires early


def test_the_readme_names_the_ready_line_exactly() -> None:
    readme = (ROOT / "README.md").read_text()
    assert f"`{READY}http://HOST:PORT`" in readme
    assert "Uvicorn running on" not in readme


def test_the_readme_register_example_shows_the_servers_refusal() -> None:
    """The README's ``field`` helper, fed the server's 409 body, prints its ``detail`` and
    fails, rather than a KeyError and an empty key."""
    readme = (ROOT / "README.md").read_text()
    helper = next(line for line in readme.splitlines() if line.startswith("field() {"))
    body = '{"detail": "An account with this email already exists"}'
    run = subprocess.run(
        ["bash", "-c", f"{helper}\nfield api_key"],
        input=body,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr.strip() == "server: An account with this email already exists"
    assert "`server: An account with this email already exists`" in readme
    ok = subprocess.run(
        ["bash", "-c", f"{helper}\nfield api_key"],
        input='{"api_key": "pk_live_x"}',
        capture_output=True,
        text=True,
        check=True,
    )
    assert ok.stdout == "pk_live_x\n"
