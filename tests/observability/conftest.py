"""The observability tests' own fixture: an OTLP/HTTP receiver for the spans the processes
export."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.observability.helpers import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """An OTLP/HTTP receiver (JSON encoding) on 127.0.0.1, with the spans it got so far."""
    spans: list[dict[str, Any]] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                for resource in body.get("resourceSpans", []):
                    for scope in resource.get("scopeSpans", []):
                        spans.extend(scope.get("spans", []))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield Receiver(f"http://127.0.0.1:{server.server_address[1]}", spans)
    finally:
        server.shutdown()
        server.server_close()
