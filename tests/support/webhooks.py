"""A real webhook receiver on 127.0.0.1: records every POST and answers with scripted status
codes (then 200)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    statuses: list[int] = field(default_factory=list)
    requests: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def snapshot(self) -> list[Received]:
        with self.lock:
            return list(self.requests)


@contextmanager
def webhook_receiver(statuses: list[int] | None = None, port: int = 0) -> Iterator[Receiver]:
    """``port`` 0: a free one; a fixed port lets a test take the receiver down and bring it
    back at the same URL."""
    receiver = Receiver(url="", statuses=list(statuses or []))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            with receiver.lock:
                receiver.requests.append(
                    Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                status = receiver.statuses.pop(0) if receiver.statuses else 200
            reply = b"ok" if status < 400 else b"receiver error " + b"x" * 3000
            self.send_response(status)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


def verify(secret: str, req: Received) -> bool:
    """Check a delivery's Standard Webhooks signature independently of the server code."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    msg_id, ts = req.headers["webhook-id"], req.headers["webhook-timestamp"]
    mac = hmac.new(key, f"{msg_id}.{ts}.".encode() + req.body, hashlib.sha256).digest()
    return req.headers["webhook-signature"] == "v1," + base64.b64encode(mac).decode()
