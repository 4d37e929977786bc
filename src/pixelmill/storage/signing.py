"""Signed, expiring URLs for stored results: ``/files/<key>?exp=<unix>&sig=<hmac>``.

Keys already contain 128 random bits, so they are unguessable; the signature additionally makes
a URL stop working after the retention period, whatever a client kept."""

from __future__ import annotations

import hashlib
import hmac
import time


class UrlSigner:
    def __init__(self, secret: str, ttl_seconds: float) -> None:
        self._secret = hashlib.sha256(b"pixelmill-files:" + secret.encode()).digest()
        self.ttl_seconds = ttl_seconds

    def _sig(self, key: str, exp: int) -> str:
        # surrogatepass: a key is whatever a request path decoded to, never an encoding error.
        message = f"{key}|{exp}".encode("utf-8", "surrogatepass")
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()[:32]

    def path_for(self, key: str, now: float | None = None) -> str:
        exp = int((now or time.time()) + self.ttl_seconds)
        return f"/files/{key}?exp={exp}&sig={self._sig(key, exp)}"

    def check(self, key: str, exp: int, sig: str, now: float | None = None) -> str | None:
        """None when valid, else the reason it is not (any string is a valid input)."""
        # compare_digest refuses non-ASCII strings; a real signature is hex, so such a one is
        # simply wrong.
        if not sig.isascii() or not hmac.compare_digest(self._sig(key, exp), sig):
            return "invalid signature"
        if exp < (now or time.time()):
            return "link expired"
        return None
