"""Verify the signature of a webhook delivery (Standard Webhooks), on the official
``standardwebhooks`` package.

A pixelmill server signs with the endpoint's secret: a ``whsec_<base64>`` secret (what the server
generates) signs with its decoded bytes, any other secret string with its UTF-8 bytes.

>>> verifier = WebhookVerifier("whsec_...")  # doctest: +SKIP
>>> event = verifier.verify(request_body_bytes, request_headers)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from standardwebhooks import Webhook, WebhookVerificationError

__all__ = ["WebhookVerificationError", "WebhookVerifier"]

SECRET_PREFIX = "whsec_"  # noqa: S105 (the secret format prefix, not a secret)


class WebhookVerifier:
    """Checks ``webhook-id``, ``webhook-timestamp`` (5 minutes of tolerance) and
    ``webhook-signature`` against the raw body."""

    def __init__(self, secret: str | bytes) -> None:
        if isinstance(secret, str) and not secret.startswith(SECRET_PREFIX):
            secret = secret.encode()
        self._webhook = Webhook(secret)

    def verify(self, body: bytes | str, headers: Mapping[str, str]) -> Any:
        """The parsed event when the signature is good; raises
        :class:`WebhookVerificationError` otherwise. Pass the body exactly as received."""
        return self._webhook.verify(body, dict(headers.items()))

    def is_valid(self, body: bytes | str, headers: Mapping[str, str]) -> bool:
        try:
            self._webhook.verify(body, dict(headers.items()), json_parse=False)
        except WebhookVerificationError:
            return False
        return True
