"""Real HTTP(S) servers on loopback, and a record of every outbound connection the process makes.

Fetch tests must prove that nothing was sent to a refused address, not just that an error came
back. ``record_network()`` uses a Python audit hook (``socket.connect`` and
``socket.getaddrinfo`` events), so it sees the real sockets httpx opens, in any thread.
"""

from __future__ import annotations

import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# ---------------------------------------------------------------------------------------------
# Network log


@dataclass
class NetworkLog:
    """Addresses connected to and host names looked up while recording."""

    connects: list[tuple[str, int]] = field(default_factory=list)
    lookups: list[str] = field(default_factory=list)

    def connected_hosts(self) -> set[str]:
        return {host for host, _port in self.connects}


_recording: list[NetworkLog] = []
_recording_lock = threading.Lock()


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _recording or event not in ("socket.connect", "socket.getaddrinfo"):
        return
    with _recording_lock:
        for log in _recording:
            if event == "socket.connect":
                address = args[1]
                if isinstance(address, tuple):
                    log.connects.append((str(address[0]), int(address[1])))
            else:
                host = args[0]
                log.lookups.append(host.decode() if isinstance(host, bytes) else str(host))


# Audit hooks cannot be removed; this one does nothing unless a recording is active.
sys.addaudithook(_audit)


@contextmanager
def record_network() -> Iterator[NetworkLog]:
    """Record outbound ``connect()`` calls and DNS lookups made by this process."""
    log = NetworkLog()
    with _recording_lock:
        _recording.append(log)
    try:
        yield log
    finally:
        with _recording_lock:
            _recording.remove(log)


# ---------------------------------------------------------------------------------------------
# Servers


@dataclass(frozen=True)
class SeenRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


Route = Callable[["Handler"], None]


class Handler(BaseHTTPRequestHandler):
    """Dispatches to the server's routes and records each request."""

    server: LoopbackHTTPServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def _dispatch(self) -> None:
        length = int(self.headers.get("Content-Length", "0") or 0)
        body = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0]
        self.server.seen.append(
            SeenRequest(self.command, self.path, dict(self.headers.items()), body)
        )
        route = self.server.routes.get(path)
        if route is None:
            self.send_bytes(404, b"not found", "text/plain")
            return
        route(self)

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def send_bytes(
        self,
        status: int,
        body: bytes,
        content_type: str = "application/octet-stream",
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer with a complete body and a Content-Length."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def redirect(self, location: str, status: int = 302) -> None:
        self.send_bytes(status, b"", headers={"Location": location})


class LoopbackHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, host: str, routes: dict[str, Route]) -> None:
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.routes = routes
        self.seen: list[SeenRequest] = []
        self.stop = threading.Event()  # stalling handlers wait on this, never on a bare sleep
        self.sni_names: list[str | None] = []
        super().__init__((host, 0), Handler)


@contextmanager
def serve(
    routes: dict[str, Route],
    host: str = "127.0.0.1",
    tls: ssl.SSLContext | None = None,
) -> Iterator[LoopbackHTTPServer]:
    """Run a real HTTP server (HTTPS with ``tls``) on ``host`` port 0 for the block."""
    server = LoopbackHTTPServer(host, routes)
    if tls is not None:

        def remember_sni(_sock: ssl.SSLObject, name: str | None, _ctx: ssl.SSLContext) -> None:
            server.sni_names.append(name)

        tls.sni_callback = remember_sni
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield server
    finally:
        server.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def base_url(server: LoopbackHTTPServer, scheme: str = "http", host: str | None = None) -> str:
    """``scheme://host:port`` of ``server`` (``host`` overrides the bound address)."""
    bound, port = server.server_address[0], server.server_address[1]
    name = host or str(bound)
    if ":" in name:
        name = f"[{name}]"
    return f"{scheme}://{name}:{port}"


def make_certificate(directory: Path, name: str = "localhost") -> tuple[Path, Path]:
    """A self-signed certificate (and key) for DNS name ``name``, made with the openssl CLI."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1",
            "-subj", f"/CN={name}", "-addext", f"subjectAltName=DNS:{name}",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key
