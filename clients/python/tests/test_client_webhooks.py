"""Signatures made by the SERVER verify with the client's verifier (on the official
``standardwebhooks`` package): a webhook registered through the client to a real receiver on
127.0.0.1, a scene job, the delivery's headers and body exactly as received."""

from __future__ import annotations

import json

import pytest
from tests.support.images import png_bytes
from tests.support.waiting import wait_until
from tests.support.webhooks import Received, webhook_receiver

from client_harness import Live
from pixelmill_client import Client, WebhookVerificationError, WebhookVerifier


def deliver_one(live: Live, secret: str | None) -> tuple[str, Received, str]:
    """Register a receiver (with ``secret``, or a generated one), finish a 1-scene job; the
    secret in force, the delivery received and the job id."""
    acct = live.account(credits=5)
    with webhook_receiver() as rx, Client(acct.api_key, live.url) as pm:
        hook = pm.create_webhook(rx.url, secret=secret)
        assert hook.secret
        product = pm.upload_product(png_bytes(160, 120))
        job = pm.generate_scenes(product.uuid, 1)
        assert pm.wait(job.job_id, interval=0.05).status == "completed"
        received = wait_until(lambda: rx.snapshot(), timeout=30)[0]
        # The same message in the account's delivery log, with its attempt.
        logged = wait_until(lambda: pm.webhook_deliveries(status="delivered"), timeout=30)
        assert logged[0].id == received.headers["webhook-id"]
        assert logged[0].attempt_log[0].status_code == 200
        assert pm.webhook_delivery(logged[0].id).event == "job.completed"
        return hook.secret, received, job.job_id


def test_a_server_signed_delivery_verifies(live: Live) -> None:
    secret, delivery, job_id = deliver_one(live, None)
    assert secret.startswith("whsec_")
    event = WebhookVerifier(secret).verify(delivery.body, delivery.headers)
    assert event["event"] == "job.completed"
    assert event["job_id"] == job_id
    assert len(event["results"]) == 1
    assert WebhookVerifier(secret).is_valid(delivery.body, delivery.headers)
    # Anything changed fails: the body, the id, the secret.
    tampered = delivery.body.replace(b"completed", b"failed")
    with pytest.raises(WebhookVerificationError):
        WebhookVerifier(secret).verify(tampered, delivery.headers)
    other_id = {**delivery.headers, "webhook-id": "msg_other"}
    assert not WebhookVerifier(secret).is_valid(delivery.body, other_id)
    assert not WebhookVerifier("whsec_" + "A" * 32).is_valid(delivery.body, delivery.headers)


def test_a_plain_string_secret_verifies_too(live: Live) -> None:
    """A secret that is not ``whsec_<base64>`` signs with its UTF-8 bytes on the server; the
    verifier keys the same way."""
    secret, delivery, _ = deliver_one(live, "my-own-signing-secret")
    assert secret == "my-own-signing-secret"
    event = WebhookVerifier(secret).verify(delivery.body, delivery.headers)
    assert json.loads(delivery.body) == event
    assert not WebhookVerifier("my-own-signing-secreT").is_valid(delivery.body, delivery.headers)
