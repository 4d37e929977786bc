"""Standard Webhooks signatures (https://www.standardwebhooks.com).

A secret ``whsec_<base64>`` signs with its base64-decoded bytes; any other secret string signs
with its UTF-8 bytes. The signature is ``v1,<base64 HMAC-SHA256 of "id.timestamp.body">``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets

PREFIX = "whsec_"


def generate_secret() -> str:
    """A fresh ``whsec_`` secret (24 random bytes)."""
    return PREFIX + base64.b64encode(secrets.token_bytes(24)).decode()


def secret_bytes(secret: str) -> bytes:
    if secret.startswith(PREFIX):
        try:
            return base64.b64decode(secret[len(PREFIX) :], validate=True)
        except (binascii.Error, ValueError):
            pass
    return secret.encode()


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header value for one message."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_bytes(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def headers(secret: str | None, msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The headers of one delivery attempt (no signature when there is no secret)."""
    out = {
        "Content-Type": "application/json",
        "User-Agent": "pixelmill-webhooks",
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
    }
    if secret:
        out["webhook-signature"] = sign(secret, msg_id, timestamp, body)
    return out
