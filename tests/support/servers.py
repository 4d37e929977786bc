"""Real servers on 127.0.0.1: the app under uvicorn, the app behind a test client, and a plain
HTTP server answering fixed responses."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.support.waiting import wait_until


@contextmanager
def live_server(app: FastAPI) -> Iterator[str]:
    """Run the app under a real uvicorn on 127.0.0.1 (ephemeral port); yields the base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_until(lambda: server.started, timeout=20)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        sock.close()


def client_for(app: FastAPI) -> TestClient:
    return TestClient(app, raise_server_exceptions=False)


@contextmanager
def serve_bytes(routes: dict[str, tuple[int, str, bytes]]) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 serving fixed responses; yields its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, ctype, body = routes.get(self.path, (404, "text/plain", b"nope"))
            self.send_response(status)
            if status in (301, 302, 307):
                self.send_header("Location", body.decode())
                body = b""
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return

    with serve_handler(Handler) as base:
        yield base


@contextmanager
def serve_handler(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A real threaded HTTP server on 127.0.0.1 answering with ``handler``; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
