"""Webhook registration and delivery against a real receiver on 127.0.0.1: correct Standard
Webhooks signature, retries with backoff until a 2xx, every attempt logged, SSRF guard."""

from __future__ import annotations

import base64
import json

from fastapi.testclient import TestClient
from sqlalchemy import select

from pixelmill.db.models import WebhookAttempt, WebhookDelivery
from pixelmill.resources import Resources
from tests.support.accounts import make_account
from tests.support.api import b64_png, upload_product, wait_batch, wait_terminal
from tests.support.waiting import wait_until
from tests.support.webhooks import verify, webhook_receiver


def test_register_list_delete_and_scoping(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=1)
    other = make_account(resources, credits=1)
    r = client.post(
        "/api/v2/webhooks", json={"url": "http://127.0.0.1:9999/hook"}, headers=acct.key_headers
    )
    assert r.status_code == 200, r.text
    hook = r.json()
    assert isinstance(hook["id"], int) and hook["secret"].startswith("whsec_")
    listed = client.get("/api/v2/webhooks", headers=acct.key_headers).json()
    assert [h["id"] for h in listed] == [hook["id"]] and "secret" not in listed[0]
    assert client.get("/api/v2/webhooks", headers=other.key_headers).json() == []
    gone = client.delete(f"/api/v2/webhooks/{hook['id']}", headers=other.key_headers)
    assert gone.status_code == 404
    assert client.delete(f"/api/v2/webhooks/{hook['id']}", headers=acct.key_headers).json() == {
        "id": hook["id"],
        "deleted": True,
    }
    assert client.get("/api/v2/webhooks", headers=acct.key_headers).json() == []


def test_private_and_metadata_urls_are_refused(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=1)
    for url in ("http://169.254.169.254/latest", "http://10.0.0.5/hook", "ftp://x/y"):
        r = client.post("/api/v2/webhooks", json={"url": url}, headers=acct.key_headers)
        assert 400 <= r.status_code < 500, url
    product = upload_product(client, acct)
    r = client.post(
        "/api/v2/generate/scenes",
        json={
            "product_uuid": product["uuid"],
            "num_scenes": 1,
            "webhook_url": "http://192.168.1.1/x",
        },
        headers=acct.key_headers,
    )
    assert r.status_code == 400
    assert client.get("/api/v2/jobs", headers=acct.key_headers).json() == []


def test_batch_completed_is_signed_and_retried_until_accepted(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    with webhook_receiver(statuses=[500, 500]) as rx:
        secret = "whsec_" + base64.b64encode(b"0123456789abcdef0123").decode()
        r = client.post(
            "/api/v2/webhooks", json={"url": rx.url, "secret": secret}, headers=acct.key_headers
        )
        assert r.status_code == 200 and r.json()["secret"] == secret
        r = client.post(
            "/api/v2/batches",
            json={"images": [{"id": "sku-1", "image": b64_png()}], "images_per_product": 1},
            headers=acct.key_headers,
        )
        assert r.status_code == 202, r.text
        batch_id = r.json()["batch_id"]
        wait_batch(client, acct, batch_id)
        wait_until(lambda: len(rx.snapshot()) >= 3, timeout=30)
        got = rx.snapshot()

    assert len(got) == 3
    assert all(req.path == "/hook" for req in got)
    assert all(verify(secret, req) for req in got)
    # One message, three attempts: the same webhook-id and body each time.
    assert len({req.headers["webhook-id"] for req in got}) == 1
    payload = json.loads(got[-1].body)
    assert payload["event"] == "batch.completed"
    assert payload["batch_id"] == batch_id
    assert payload["status"] == "completed"
    assert payload["timestamp"].endswith("Z")

    with resources.db.read() as session:
        delivery = session.scalar(
            select(WebhookDelivery).where(WebhookDelivery.id == got[0].headers["webhook-id"])
        )
        assert delivery is not None
        assert delivery.status == "delivered" and delivery.attempts == 3
        attempts = session.scalars(
            select(WebhookAttempt)
            .where(WebhookAttempt.delivery_id == delivery.id)
            .order_by(WebhookAttempt.number)
        ).all()
    assert [a.status_code for a in attempts] == [500, 500, 200]
    assert [a.number for a in attempts] == [1, 2, 3]
    assert all(a.duration_ms >= 0 for a in attempts)
    assert attempts[0].response_body.startswith("receiver error")
    assert len(attempts[0].response_body) == 1000  # truncated
    assert attempts[2].response_body == "ok"

    # The same log through the API, scoped to the account.
    logged = client.get("/api/v2/webhooks/deliveries", headers=acct.key_headers).json()
    (entry,) = logged["deliveries"]
    assert entry["id"] == delivery.id and entry["status"] == "delivered"
    assert entry["payload"]["batch_id"] == batch_id and entry["next_attempt_at"] is None
    assert [a["status_code"] for a in entry["attempt_log"]] == [500, 500, 200]
    one = client.get(f"/api/v2/webhooks/deliveries/{delivery.id}", headers=acct.key_headers)
    assert one.status_code == 200 and one.json()["attempts"] == 3
    failed = client.get("/api/v2/webhooks/deliveries?status=failed", headers=acct.key_headers)
    assert failed.json()["deliveries"] == []
    other = make_account(resources, credits=1)
    assert (
        client.get(
            f"/api/v2/webhooks/deliveries/{delivery.id}", headers=other.key_headers
        ).status_code
        == 404
    )
    assert (
        client.get("/api/v2/webhooks/deliveries", headers=other.key_headers).json()["deliveries"]
        == []
    )


def test_job_webhook_url_overrides_registered_and_reports_results(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    with webhook_receiver() as registered, webhook_receiver() as override:
        secret = client.post(
            "/api/v2/webhooks", json={"url": registered.url}, headers=acct.key_headers
        ).json()["secret"]
        product = upload_product(client, acct)
        r = client.post(
            "/api/v2/generate/scenes",
            json={"product_uuid": product["uuid"], "num_scenes": 2, "webhook_url": override.url},
            headers=acct.key_headers,
        )
        job_id = r.json()["job_id"]
        assert wait_terminal(client, acct, job_id)["status"] == "completed"
        wait_until(lambda: override.snapshot(), timeout=30)
        # A registered-only job goes to the registered URL.
        r2 = client.post(
            "/api/v2/generate/scenes",
            json={"product_uuid": product["uuid"], "num_scenes": 1},
            headers=acct.key_headers,
        )
        wait_terminal(client, acct, r2.json()["job_id"])
        wait_until(lambda: registered.snapshot(), timeout=30)
        assert len(override.snapshot()) == 1
        first = override.snapshot()[0]
    assert verify(secret, first)
    payload = json.loads(first.body)
    assert payload["event"] == "job.completed"
    assert payload["job_id"] == job_id and payload["status"] == "completed"
    assert len(payload["results"]) == 2
    assert all(set(res) >= {"scene", "url"} for res in payload["results"])
    assert json.loads(registered.snapshot()[0].body)["job_id"] == r2.json()["job_id"]


def test_job_failed_event_carries_the_error(client: TestClient, resources: Resources) -> None:
    import numpy as np

    from tests.support.images import encode

    acct = make_account(resources, credits=10)
    flat = base64.b64encode(encode(np.full((120, 160, 3), 90, np.uint8))).decode()
    with webhook_receiver() as rx:
        r = client.post(
            "/api/v2/jobs",
            json={"product_image": flat, "images_to_generate": 2, "webhook_url": rx.url},
            headers=acct.key_headers,
        )
        job = wait_terminal(client, acct, r.json()["job_id"])
        wait_until(lambda: rx.snapshot(), timeout=30)
        got = rx.snapshot()
    assert job["status"] == "failed"
    payload = json.loads(got[0].body)
    assert payload["event"] == "job.failed" and payload["status"] == "failed"
    assert payload["job_id"] == job["job_id"] and payload["error"] == job["error"]
    # No registered webhook: signed with the account's own secret, which its owner can read.
    r = client.get("/api/v2/webhooks/signing-secret", headers=acct.key_headers)
    assert r.status_code == 200, r.text
    secret = r.json()["secret"]
    assert secret.startswith("whsec_") and verify(secret, got[0])
    again = client.get("/api/v2/webhooks/signing-secret", headers=acct.key_headers)
    assert again.json()["secret"] == secret  # made once
    other = make_account(resources, credits=1)
    theirs = client.get("/api/v2/webhooks/signing-secret", headers=other.key_headers).json()
    assert theirs["secret"] != secret


def test_delivery_gives_up_after_max_attempts(client: TestClient, resources: Resources) -> None:
    from pixelmill.webhooks.delivery import emit
    from pixelmill.webhooks.tasks import deliver

    acct = make_account(resources, credits=1)
    attempts = resources.settings.webhook_max_attempts
    with webhook_receiver(statuses=[503] * (attempts + 5)) as rx:
        with resources.db.transaction() as session:
            [delivery_id] = emit(
                session, resources.queue, acct.id, "job.completed", {"job_id": "x"}, rx.url
            )

        def status() -> str | None:
            with resources.db.read() as session:
                row = session.get(WebhookDelivery, delivery_id)
                return row.status if row is not None and row.status != "pending" else None

        assert wait_until(status, timeout=60) == "failed"
        assert len(rx.snapshot()) == attempts
    # Settled: nothing more is sent.
    assert deliver(resources.db, resources.queue, resources.settings, delivery_id) is None
