"""A stand-in for Stripe on 127.0.0.1: it answers ``POST /v1/checkout/sessions`` the way
Stripe's API does (form-encoded request, a Checkout Session object back), records each request
as it came, and signs webhook events the way Stripe signs them (``Stripe-Signature:
t=<unix time>,v1=<hex HMAC-SHA256 of "t.payload" with the endpoint's secret>``)."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

SECRET_KEY = "sk_test_" + "k" * 24
WEBHOOK_SECRET = "whsec_" + "w" * 32


@dataclass
class Call:
    method: str
    path: str
    headers: dict[str, str]
    form: dict[str, str]
    """The form-encoded body as Stripe reads it: ``line_items[0][quantity]`` -> ``1``."""


@dataclass
class FakeStripe:
    url: str = ""
    calls: list[Call] = field(default_factory=list)
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    fail_with: int | None = None
    """Answer the next create with this HTTP status and a Stripe error body."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def session_object(self, form: dict[str, str]) -> dict[str, Any]:
        sid = "cs_test_" + uuid.uuid4().hex
        amount = int(form["line_items[0][price_data][unit_amount]"]) * int(
            form["line_items[0][quantity]"]
        )
        metadata = {
            k[len("metadata[") : -1]: v for k, v in form.items() if k.startswith("metadata[")
        }
        return {
            "id": sid,
            "object": "checkout.session",
            "mode": form["mode"],
            "status": "open",
            "payment_status": "unpaid",
            "amount_subtotal": amount,
            "amount_total": amount,
            "currency": form["line_items[0][price_data][currency]"],
            "client_reference_id": form.get("client_reference_id"),
            "metadata": metadata,
            "payment_intent": None,
            "success_url": form["success_url"],
            "cancel_url": form["cancel_url"],
            "url": f"https://checkout.stripe.com/c/pay/{sid}#fidkdWxOYHwnPyd1blpxYHZxWjA0",
            "livemode": False,
        }


@contextmanager
def fake_stripe() -> Iterator[FakeStripe]:
    fake = FakeStripe()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length).decode()
            form = dict(parse_qsl(raw, keep_blank_values=True))
            call = Call("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, form)
            with fake.lock:
                fake.calls.append(call)
                failing, fake.fail_with = fake.fail_with, None
            if failing is not None:
                body = {"error": {"type": "api_error", "message": "Stripe is having a day"}}
                return self._answer(failing, body)
            if self.path != "/v1/checkout/sessions":
                return self._answer(404, {"error": {"type": "invalid_request_error"}})
            made = fake.session_object(form)
            with fake.lock:
                fake.sessions[made["id"]] = made
            return self._answer(200, made)

        def _answer(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Request-Id", "req_" + uuid.uuid4().hex[:14])
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


def event(kind: str, obj: dict[str, Any], event_id: str | None = None) -> bytes:
    """A Stripe event body around ``obj``."""
    return json.dumps(
        {
            "id": event_id or "evt_" + uuid.uuid4().hex,
            "object": "event",
            "api_version": "2025-01-27.acacia",
            "created": int(time.time()),
            "type": kind,
            "livemode": False,
            "pending_webhooks": 1,
            "request": {"id": None, "idempotency_key": None},
            "data": {"object": obj},
        }
    ).encode()


def signature(payload: bytes, secret: str = WEBHOOK_SECRET, at: int | None = None) -> str:
    """The ``Stripe-Signature`` header Stripe would send for ``payload`` at time ``at``."""
    t = int(time.time()) if at is None else at
    mac = hmac.new(secret.encode(), f"{t}.".encode() + payload, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def paid(session: dict[str, Any], payment_intent: str) -> dict[str, Any]:
    """The session as ``checkout.session.completed`` reports it once paid."""
    return {
        **session,
        "status": "complete",
        "payment_status": "paid",
        "payment_intent": payment_intent,
    }


def refunded_charge(payment_intent: str, amount: int, refunded: int) -> dict[str, Any]:
    return {
        "id": "ch_" + uuid.uuid4().hex[:24],
        "object": "charge",
        "payment_intent": payment_intent,
        "amount": amount,
        "amount_captured": amount,
        "amount_refunded": refunded,
        "refunded": refunded >= amount,
        "currency": "usd",
        "metadata": {},
    }
