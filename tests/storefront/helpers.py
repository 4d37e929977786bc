"""Helpers of the storefront tests: product photos served from a real HTTP server on
127.0.0.1, and polling an enrichment job through the surface."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import cv2
import httpx
import numpy as np

from tests.support.accounts import Account
from tests.support.images import encode
from tests.support.waiting import wait_until

SHOP = "demo.myshopify.com"
JOBS = "/api/v2/shopify/enrichment-jobs"
ACTIVITIES = "/api/v2/shopify/activities"

COLOURS = {
    "blue": (40, 90, 190),
    "red": (200, 40, 40),
    "green": (40, 150, 60),
    "orange": (235, 135, 35),
    "purple": (120, 50, 160),
}


def product_photo(colour: tuple[int, int, int], size: int = 240) -> np.ndarray:
    """A bottle-like product of one colour on a white backdrop."""
    img = np.full((size, size, 3), 255, np.uint8)
    c = size // 2
    cv2.rectangle(img, (c - 35, size // 4), (c + 35, size - 30), colour, -1)
    cv2.rectangle(img, (c - 14, size // 4 - 30), (c + 14, size // 4), colour, -1)
    return img


def wait_job(
    http: httpx.Client, acct: Account, job_id: int, timeout: float = 120
) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        r = http.get(f"{JOBS}/{job_id}", headers=acct.key_headers)
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        return body if body["status"] in ("completed", "failed") else None

    result: dict[str, Any] = wait_until(done, timeout=timeout, interval=0.2)
    return result


@contextmanager
def image_server(
    routes: dict[str, bytes], gate: threading.Event | None = None, gated: str = ""
) -> Iterator[str]:
    """Serves ``routes`` (path -> PNG); other paths are 404. A request for ``gated`` waits
    until ``gate`` is set (a slow image, to stop a job mid-run)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if gate is not None and self.path == gated:
                gate.wait(30)
            body = routes.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Type", "image/png" if body else "text/plain")
            payload = body if body is not None else b"not here"
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        if gate is not None:
            gate.set()
        server.shutdown()
        server.server_close()


def png(colour: tuple[int, int, int]) -> bytes:
    return encode(product_photo(colour))
