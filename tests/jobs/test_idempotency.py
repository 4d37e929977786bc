"""Idempotency-Key on creates: the same key and body return the first response and reserve
once; the same key with another body is a 409; keys are per account."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from pixelmill.resources import Resources
from tests.support.accounts import make_account
from tests.support.api import b64_png, upload_product, wait_terminal
from tests.support.credits import balance_of

pytestmark = pytest.mark.both_databases


def test_same_key_same_body_replays_without_second_reservation(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    product = upload_product(client, acct)
    body = {"product_uuid": product["uuid"], "num_scenes": 2}
    headers = {**acct.key_headers, "Idempotency-Key": "order-42"}
    first = client.post("/api/v2/generate/scenes", json=body, headers=headers)
    second = client.post("/api/v2/generate/scenes", json=body, headers=headers)
    assert first.status_code == second.status_code == 202
    assert first.json() == second.json()
    assert balance_of(resources, acct.id) == 8
    assert len(client.get("/api/v2/jobs", headers=acct.key_headers).json()) == 1

    other_body = {"product_uuid": product["uuid"], "num_scenes": 3}
    conflict = client.post("/api/v2/generate/scenes", json=other_body, headers=headers)
    assert conflict.status_code == 409
    assert "Idempotency-Key" in conflict.json()["detail"]
    # The same key on another endpoint is another request too.
    elsewhere = client.post(
        "/api/v2/jobs", json={"product_image": b64_png(), "images_to_generate": 1}, headers=headers
    )
    assert elsewhere.status_code == 409
    assert balance_of(resources, acct.id) == 8
    wait_terminal(client, acct, first.json()["job_id"])


def test_keys_are_per_account_and_cover_products_batches_and_jobs(
    client: TestClient, resources: Resources
) -> None:
    a = make_account(resources, credits=10)
    b = make_account(resources, credits=10)
    key = {"Idempotency-Key": "same-key"}
    body = {"image": b64_png(), "filename": "p.png"}
    pa1 = client.post("/api/v2/products", json=body, headers={**a.key_headers, **key})
    pa2 = client.post("/api/v2/products", json=body, headers={**a.key_headers, **key})
    pb = client.post("/api/v2/products", json=body, headers={**b.key_headers, **key})
    assert pa1.status_code == pa2.status_code == pb.status_code == 201
    assert pa1.json()["uuid"] == pa2.json()["uuid"] != pb.json()["uuid"]
    assert len(client.get("/api/v2/products", headers=a.key_headers).json()) == 1

    batch = {"images": [{"id": "x", "image": b64_png()}], "images_per_product": 2}
    bkey = {**a.key_headers, "Idempotency-Key": "batch-1"}
    b1 = client.post("/api/v2/batches", json=batch, headers=bkey)
    b2 = client.post("/api/v2/batches", json=batch, headers=bkey)
    assert b1.status_code == b2.status_code == 202 and b1.json() == b2.json()
    jkey = {**a.key_headers, "Idempotency-Key": "job-1"}
    job = {"product_image": b64_png(), "images_to_generate": 1}
    j1 = client.post("/api/v2/jobs", json=job, headers=jkey)
    j2 = client.post("/api/v2/jobs", json=job, headers=jkey)
    assert j1.json()["job_id"] == j2.json()["job_id"]
    assert balance_of(resources, a.id) == 10 - 2 - 1
    wait_terminal(client, a, j1.json()["job_id"])
