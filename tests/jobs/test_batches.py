"""Batches end to end on the in-process queue: 3 images x 2 scenes -> 6 results and 6 credits;
a cancelled batch releases exactly the unused credits; a failing item releases its credits;
another account's batch is a 404."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from fastapi.testclient import TestClient

from pixelmill.resources import Resources
from tests.support.accounts import make_account
from tests.support.api import b64_png, get_json, wait_batch
from tests.support.credits import balance_of, held_reservations, ledger_consistent
from tests.support.images import encode
from tests.support.waiting import wait_until


def test_batch_of_three_by_two_completes_with_six_results(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=20)
    r = client.post(
        "/api/v2/batches",
        json={
            "images": [
                {"id": "sku-a", "image": b64_png()},
                {"id": "sku-b", "image": b64_png(200, 150), "category": "beauty"},
                {"id": "sku-c", "image": b64_png(140, 180)},
            ],
            "images_per_product": 2,
        },
        headers=acct.key_headers,
    )
    assert r.status_code == 202, r.text
    created = r.json()
    assert created["total_images"] == 3 and created["images_to_generate"] == 6
    assert created["credits_reserved"] == 6 and created["credits_remaining"] == 14
    assert created["status"] == "pending"
    assert created["poll_url"].endswith(f"/api/v2/batches/{created['batch_id']}")

    batch = wait_batch(client, acct, created["batch_id"])
    assert batch["status"] == "completed" and batch["cancelled"] is False
    assert batch["progress"] == {"completed": 3, "failed": 0, "pending": 0, "total": 3}
    assert batch["credits_used"] == 6 and batch["credits_reserved"] == 6
    assert batch["started_at"] and batch["completed_at"]
    images = {img["id"]: img for img in batch["images"]}
    assert set(images) == {"sku-a", "sku-b", "sku-c"}
    results = [res for img in images.values() for res in img["results"]]
    assert len(results) == 6
    assert all(img["status"] == "completed" and len(img["results"]) == 2 for img in images.values())
    for res in results:
        assert client.get(res["url"]).status_code == 200
    assert balance_of(resources, acct.id) == 14
    assert held_reservations(resources, acct.id) == 0
    assert ledger_consistent(resources, acct.id)

    lean = get_json(client, acct, f"/api/v2/batches/{created['batch_id']}?include_images=false")
    assert lean["images"] == []
    listed = client.get("/api/v2/batches", headers=acct.key_headers).json()
    assert [b["batch_id"] for b in listed] == [created["batch_id"]]
    assert (
        client.get("/api/v2/batches?status_filter=pending", headers=acct.key_headers).json() == []
    )


@pytest.mark.both_databases
def test_failing_item_releases_its_credits(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=20)
    flat = base64.b64encode(encode(np.full((120, 160, 3), 200, np.uint8))).decode()
    r = client.post(
        "/api/v2/batches",
        json={
            "images": [{"id": "good", "image": b64_png()}, {"id": "blank", "image": flat}],
            "images_per_product": 3,
        },
        headers=acct.key_headers,
    )
    assert r.status_code == 202, r.text
    batch = wait_batch(client, acct, r.json()["batch_id"])
    assert batch["progress"] == {"completed": 1, "failed": 1, "pending": 0, "total": 2}
    images = {img["id"]: img for img in batch["images"]}
    assert images["blank"]["status"] == "failed" and images["blank"]["error"]
    assert images["blank"]["results"] == []
    assert len(images["good"]["results"]) == 3
    assert batch["credits_used"] == 3
    assert balance_of(resources, acct.id) == 17
    assert held_reservations(resources, acct.id) == 0
    assert ledger_consistent(resources, acct.id)


@pytest.mark.both_databases
def test_cancel_releases_exactly_the_unused_credits(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=200)
    images = [{"id": f"sku-{i}", "image": b64_png()} for i in range(12)]
    r = client.post(
        "/api/v2/batches",
        json={"images": images, "images_per_product": 12},
        headers=acct.key_headers,
    )
    assert r.status_code == 202, r.text
    batch_id = r.json()["batch_id"]
    assert balance_of(resources, acct.id) == 200 - 144

    c = client.post(f"/api/v2/batches/{batch_id}/cancel", headers=acct.key_headers)
    assert c.status_code == 200, c.text
    assert c.json()["status"] == "completed" and c.json()["cancelled"] is True

    final = get_json(client, acct, f"/api/v2/batches/{batch_id}")
    assert final["status"] == "completed" and final["cancelled"] is True
    delivered = sum(len(img["results"]) for img in final["images"])
    # Items that were running stop at their next scene; wait until none writes any more.
    assert final["progress"]["pending"] == 0
    assert final["credits_used"] == delivered
    assert delivered < 144
    assert balance_of(resources, acct.id) == 200 - delivered
    assert held_reservations(resources, acct.id) == 0
    assert ledger_consistent(resources, acct.id)
    cancelled = [img for img in final["images"] if img["status"] == "failed"]
    assert cancelled and all(img["error"] == "cancelled" for img in cancelled)

    again = client.post(f"/api/v2/batches/{batch_id}/cancel", headers=acct.key_headers)
    assert again.status_code == 409
    # Every item is terminal: their uploaded inputs are gone.
    inputs = resources.settings.data_dir / "library" / "inputs"
    wait_until(lambda: not any(inputs.iterdir()), timeout=30)


def test_other_accounts_batch_is_404(client: TestClient, resources: Resources) -> None:
    owner = make_account(resources, credits=10)
    other = make_account(resources, credits=10)
    r = client.post(
        "/api/v2/batches",
        json={"images": [{"id": "x", "image": b64_png()}], "images_per_product": 1},
        headers=owner.key_headers,
    )
    batch_id = r.json()["batch_id"]
    assert client.get(f"/api/v2/batches/{batch_id}", headers=other.key_headers).status_code == 404
    cancel = client.post(f"/api/v2/batches/{batch_id}/cancel", headers=other.key_headers)
    assert cancel.status_code == 404
    assert client.get("/api/v2/batches", headers=other.key_headers).json() == []
    wait_batch(client, owner, batch_id)


def test_batch_validation(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=10)
    too_many = [{"id": str(i), "image": "AAAA"} for i in range(101)]
    for body in (
        {"images": [], "images_per_product": 1},
        {"images": too_many},
        {"images": [{"id": "a", "image": b64_png()}], "images_per_product": 13},
        {"images": [{"id": "a", "image": b64_png()}, {"id": "a", "image": b64_png()}]},
    ):
        r = client.post("/api/v2/batches", json=body, headers=acct.key_headers)
        assert r.status_code == 422, body
    assert balance_of(resources, acct.id) == 10
