"""Standard Webhooks signatures, checked against an independent computation."""

from __future__ import annotations

import base64
import hashlib
import hmac

from pixelmill.webhooks.signing import generate_secret, secret_bytes, sign


def reference(key: bytes, msg_id: str, ts: int, body: bytes) -> str:
    mac = hmac.new(key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def test_whsec_secret_signs_with_decoded_bytes() -> None:
    raw = bytes(range(24))
    secret = "whsec_" + base64.b64encode(raw).decode()
    assert secret_bytes(secret) == raw
    body = b'{"event":"batch.completed"}'
    assert sign(secret, "msg_1", 1700000000, body) == reference(raw, "msg_1", 1700000000, body)


def test_plain_secret_signs_with_utf8_bytes() -> None:
    body = b"{}"
    assert sign("my secret é", "msg_2", 5, body) == reference(
        "my secret é".encode(), "msg_2", 5, body
    )


def test_generated_secrets_are_whsec_and_distinct() -> None:
    a, b = generate_secret(), generate_secret()
    assert a.startswith("whsec_") and a != b
    assert len(secret_bytes(a)) == 24
