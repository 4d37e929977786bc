"""PATCH of enrichment jobs: an app-run job moves along the spec's states with its counters
(concurrent PATCHes leave one PATCH's values, never a mix; its activity is logged once) and
never touches credits; a server-run job takes only a cancel; other accounts get 404."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from pixelmill.db.models import StorefrontActivity
from pixelmill.resources import Resources
from tests.storefront.helpers import JOBS, SHOP, wait_job
from tests.support.accounts import Account, make_account
from tests.support.credits import balance_of, held_reservations, ledger_consistent


def _app_job(client: TestClient, acct: Account, n: int = 4) -> dict[str, Any]:
    r = client.post(
        JOBS,
        json={
            "shop_domain": SHOP,
            "run_by": "app",
            "products": [{"id": f"p{i}", "title": f"Product {i}"} for i in range(n)],
            "enrichments": ["description", "tags"],
        },
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def test_app_job_moves_through_states_and_counters(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    created = _app_job(client, acct)
    assert created["credits_reserved"] == 0 and created["status"] == "pending"
    url, h = f"{JOBS}/{created['job_id']}", acct.key_headers

    r = client.patch(url, params={"status": "processing", "products_completed": 1}, headers=h)
    assert r.status_code == 200, r.text
    assert (r.json()["status"], r.json()["products_completed"]) == ("processing", 1)
    results = json.dumps([{"id": "p0", "description": "new copy"}])
    r = client.patch(
        url,
        params={
            "status": "completed",
            "products_completed": 3,
            "products_failed": 1,
            "credits_used": 7,
            "results_json": results,
        },
        headers=h,
    )
    done = r.json()
    assert done["status"] == "completed" and done["results_json"] == results
    assert (done["products_completed"], done["products_failed"], done["credits_used"]) == (3, 1, 7)
    assert done["activity_id"] is not None and done["completed_at"] is not None
    # The app's credits_used is informational: the balance did not move.
    assert balance_of(resources, acct.id) == 10 and ledger_consistent(resources, acct.id)

    refused = [
        client.patch(url, params={"status": "processing"}, headers=h),
        client.patch(url, params={"products_completed": 4}, headers=h),
    ]
    assert [x.status_code for x in refused] == [409, 409]
    assert client.patch(url, params={"status": "completed"}, headers=h).status_code == 200

    again = _app_job(client, acct, n=2)
    url2 = f"{JOBS}/{again['job_id']}"
    bad = [
        client.patch(url2, params={"products_completed": 2, "products_failed": 1}, headers=h),
        client.patch(url2, params={"results_json": "{not json"}, headers=h),
        client.patch(url2, params={"status": "queued"}, headers=h),
        client.patch(url2, params={"products_failed": -1}, headers=h),
    ]
    assert [x.status_code for x in bad] == [422] * 4
    r = client.patch(url2, params={"status": "failed", "error_message": "app crashed"}, headers=h)
    assert r.json()["status"] == "failed" and r.json()["error_message"] == "app crashed"
    activity = client.get(f"/api/v2/shopify/activities/{r.json()['activity_id']}", headers=h)
    assert activity.json()["status"] == "failed"

    listed = client.get(JOBS, params={"status": "failed"}, headers=h).json()
    assert [j["job_id"] for j in listed["jobs"]] == [again["job_id"]] and listed["total"] == 1
    listed = client.get(JOBS, params={"shop_domain": SHOP, "limit": 1}, headers=h).json()
    assert listed["total"] == 2 and len(listed["jobs"]) == 1 and listed["limit"] == 1
    assert listed["jobs"][0]["job_id"] == again["job_id"]  # newest first
    assert client.get(JOBS, params={"limit": 51}, headers=h).status_code == 422
    assert (
        client.get(JOBS, params={"shop_domain": "x.myshopify.com"}, headers=h).json()["total"] == 0
    )


@pytest.mark.both_databases
def test_concurrent_patches_leave_a_consistent_row(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=0)
    created = _app_job(client, acct, n=20)
    url, h = f"{JOBS}/{created['job_id']}", acct.key_headers
    codes: list[int] = []
    lock = threading.Lock()

    def patch(i: int) -> None:
        values = {
            "products_completed": i,
            "products_failed": i,
            "credits_used": i,
            "status": "processing",
            "results_json": json.dumps({"writer": i}),
        }
        r = client.patch(url, params=values, headers=h)
        with lock:
            codes.append(r.status_code)

    threads = [threading.Thread(target=patch, args=(i,)) for i in range(1, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert codes == [200] * 8
    row = client.get(url, headers=h).json()
    i = row["products_completed"]
    assert row["products_failed"] == i and row["credits_used"] == i
    assert json.loads(row["results_json"]) == {"writer": i} and row["status"] == "processing"

    # Racing terminal moves: one activity, whoever wins.
    finals: list[int] = []

    def finish(status: str) -> None:
        r = client.patch(url, params={"status": status}, headers=h)
        with lock:
            finals.append(r.status_code)

    racers = [threading.Thread(target=finish, args=(s,)) for s in ["completed", "failed"] * 3]
    for t in racers:
        t.start()
    for t in racers:
        t.join()
    assert sorted(finals).count(200) >= 1 and set(finals) <= {200, 409}
    with resources.db.read() as session:
        logged = session.scalar(
            select(func.count())
            .select_from(StorefrontActivity)
            .where(StorefrontActivity.job_id == created["job_id"])
        )
    assert logged == 1


def test_server_job_patch_is_a_cancel_only_and_ids_are_per_account(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=20)
    other = make_account(resources, credits=20)
    # A product without an image: text from its own words only (no photo to measure).
    r = client.post(
        JOBS,
        json={
            "shop_domain": SHOP,
            "products": [{"id": "p1", "title": "Linen Shirt", "description": "Soft linen."}],
            "enrichments": ["description", "tags"],
        },
        headers=acct.key_headers,
    )
    assert r.status_code == 200 and r.json()["credits_reserved"] == 2
    url, h = f"{JOBS}/{r.json()['job_id']}", acct.key_headers

    for call in (
        client.get(url, headers=other.key_headers),
        client.patch(url, params={"status": "failed"}, headers=other.key_headers),
        client.delete(url, headers=other.key_headers),
    ):
        assert call.status_code == 404
    assert client.get(JOBS, headers=other.key_headers).json()["total"] == 0

    assert client.patch(url, params={"products_completed": 1}, headers=h).status_code == 409
    assert client.patch(url, params={"credits_used": 0}, headers=h).status_code == 409
    assert client.patch(url, params={"status": "completed"}, headers=h).status_code in (200, 409)

    job = wait_job(client, acct, r.json()["job_id"])
    assert job["status"] == "completed"
    (product,) = job["results"]
    assert product["description"] == "Linen Shirt. Soft linen."
    assert product["tags"][:2] == ["linen", "shirt"]
    assert "no photo measured" in product["method"]
    assert balance_of(resources, acct.id) == 18
    # Finished: a cancel is refused and changes nothing.
    assert client.patch(url, params={"status": "failed"}, headers=h).status_code == 409
    assert balance_of(resources, acct.id) == 18
    assert held_reservations(resources, acct.id) == 0 and ledger_consistent(resources, acct.id)

    # Refused creates cost nothing.
    bad = [
        {"shop_domain": SHOP, "products": []},
        {"shop_domain": SHOP, "products": [{"id": "a"}]},  # no title
        {"shop_domain": SHOP, "products": [{"id": "a", "title": "A"}], "enrichments": ["images"]},
        {"shop_domain": SHOP, "products": [{"id": "a", "title": "A"}] * 2},
        {"shop_domain": SHOP, "products": [{"id": "a", "title": "A", "image_url": "ftp://x/y"}]},
        {"shop_domain": "not a host", "products": [{"id": "a", "title": "A"}]},
        {"shop_domain": SHOP, "products": [{"id": "a", "title": "A", "image_base64": "@@@"}]},
        {
            "shop_domain": SHOP,
            "products": [
                {"id": "a", "title": "A", "image_url": "http://h/i", "image_base64": "AAAA"}
            ],
        },
    ]
    codes = [client.post(JOBS, json=b, headers=h).status_code for b in bad]
    assert all(400 <= c < 500 for c in codes) and codes[:6] == [422] * 6, codes
    r = client.post(
        JOBS,
        json={
            "shop_domain": SHOP,
            "products": [{"id": "a", "product_uuid": "7d7c1c7e-8b7e-4b8e-9d1e-1c1c1c1c1c1c"}],
        },
        headers=h,
    )
    assert r.status_code == 404
    # The same Idempotency-Key answers the first job again and reserves nothing more.
    body = {"shop_domain": SHOP, "products": [{"id": "k", "title": "Key Ring"}]}
    keyed = {**h, "Idempotency-Key": "order-7"}
    first = client.post(JOBS, json=body, headers=keyed)
    again = client.post(JOBS, json=body, headers=keyed)
    assert first.status_code == again.status_code == 200
    assert first.json()["job_id"] == again.json()["job_id"]
    wait_job(client, acct, first.json()["job_id"])
    assert balance_of(resources, acct.id) == 15  # 3 more credits, once
    poor = make_account(resources, credits=1)
    r = client.post(
        JOBS,
        json={"shop_domain": SHOP, "products": [{"id": "a", "title": "A"}]},
        headers=poor.key_headers,
    )
    assert r.status_code == 402 and balance_of(resources, poor.id) == 1
    assert balance_of(resources, acct.id) == 15
