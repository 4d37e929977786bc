"""A small pixelmill deployment of real processes on 127.0.0.1 for the multi-node tests: API
nodes (``pixelmill serve``), Celery workers (``pixelmill worker``), each with a data directory
of its own (no shared disk), and a Redis server of the module's own (so killing it never
touches the suite's shared Redis on 6379)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import httpx

from tests.queue.workers import PIXELMILL, ROOT, kill
from tests.support.waiting import wait_until


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@dataclass
class Node:
    """One process of the deployment, restartable with the same command, port and folder."""

    name: str
    argv: list[str]
    env: dict[str, str]
    log: Path
    port: int | None = None
    proc: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    _log_offset: int = field(default=0, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Node:
        self._log_offset = self.log.stat().st_size if self.log.exists() else 0
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                self.argv,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                cwd=str(ROOT),
            )
        self.started_at = time.monotonic()
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_text(self) -> str:
        """What this run of the process has logged so far."""
        with self.log.open("rb") as fh:
            fh.seek(self._log_offset)
            return fh.read().decode(errors="replace")

    def sigkill(self) -> None:
        """The fault: SIGKILL to the process group, no chance to clean up."""
        assert self.proc is not None
        kill(self.proc, signal.SIGKILL)

    def pause(self) -> None:
        """SIGSTOP to the process group: it takes no more work until :meth:`resume`."""
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGCONT)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            kill(self.proc)


def is_ready(node: Node, role: str) -> bool:
    if not node.alive():
        tail = node.log_text()[-3000:]
        raise AssertionError(f"{node.name} exited ({node.proc and node.proc.returncode}):\n{tail}")
    if role == "worker":
        return " ready." in node.log_text()
    if role == "redis":
        return node.port is not None and port_open(node.port)
    try:
        return httpx.get(f"{node.url}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@dataclass
class Cluster:
    """The processes of one test module, all sharing ``env`` (database, Redis, S3, secret)
    except ``PIXELMILL_DATA_DIR``: each node gets a folder of its own under ``root``."""

    root: Path
    env: dict[str, str]
    nodes: dict[str, tuple[Node, str]] = field(default_factory=dict)

    def _command(self) -> list[str]:
        return [str(PIXELMILL)]

    def _node(self, name: str, role: str, argv: list[str], port: int | None, **extra: str) -> Node:
        data_dir = self.root / name
        data_dir.mkdir(parents=True, exist_ok=True)
        env = {**self.env, "PIXELMILL_DATA_DIR": str(data_dir), **extra}
        node = Node(name, argv, env, self.root / f"{name}.log", port)
        self.nodes[name] = (node, role)
        return node

    def api(self, name: str, **extra: str) -> Node:
        port = free_port()
        argv = [*self._command(), "serve", "--host", "127.0.0.1", "--port", str(port)]
        return self._node(name, "api", argv, port, **extra)

    def worker(self, name: str, **extra: str) -> Node:
        argv = [*self._command(), "worker", "--concurrency", "1"]
        return self._node(name, "worker", argv, None, **extra)

    def redis(self, name: str = "redis") -> Node:
        port = free_port()
        argv = [
            "redis-server",
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--save",
            "",
            "--appendonly",
            "no",
        ]
        return self._node(name, "redis", argv, port)

    def wait_ready(self, *nodes: Node, timeout: float = 120) -> None:
        roles = {name: role for name, (_, role) in self.nodes.items()}
        for node in nodes:
            role = roles[node.name]
            wait_until(partial(is_ready, node, role), timeout=timeout, interval=0.2)

    def ensure_running(self, timeout: float = 120) -> None:
        """Restart every node a previous test left dead (same port, same folder)."""
        dead = [node for node, _ in self.nodes.values() if not node.alive()]
        for node in dead:
            node.start()
        self.wait_ready(*dead, timeout=timeout)

    def forget(self, node: Node) -> None:
        """Stop ``node`` and never restart it."""
        node.stop()
        self.nodes.pop(node.name, None)

    def stop(self) -> None:
        for node, _ in reversed(list(self.nodes.values())):
            node.stop()

    def data_dirs(self) -> list[Path]:
        return [Path(node.env["PIXELMILL_DATA_DIR"]) for node, _ in self.nodes.values()]
