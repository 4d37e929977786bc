"""The activity log: create, list (filters, pagination, newest first, totals), summary, detail
with change details, PATCH; per account and per shop; bad input is a 422."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from pixelmill.resources import Resources
from tests.storefront.helpers import ACTIVITIES, SHOP
from tests.support.accounts import Account, make_account

OTHER_SHOP = "other-shop.myshopify.com"


def _log(client: TestClient, acct: Account, **fields: Any) -> dict[str, Any]:
    body = {
        "shop_domain": SHOP,
        "activity_type": "description",
        "status": "completed",
        "products": [
            {
                "id": "p1",
                "title": "Mug",
                "changes": [{"field": "description", "before": "old", "after": "new"}],
            }
        ],
        "credits_used": 1,
        **fields,
    }
    r = client.post(ACTIVITIES, json=body, headers=acct.key_headers)
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


def test_activities_list_filter_paginate_and_summarise(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=0)
    first = _log(client, acct)
    assert isinstance(first["id"], int) and first["products"][0]["changes"][0]["after"] == "new"
    _log(client, acct, activity_type="tags", products=[{"id": "p2", "title": "Cap"}] * 3)
    _log(
        client,
        acct,
        activity_type="images",
        products=[{"id": "p3", "title": "Hat", "changes": [{"field": "image", "after": "x.png"}]}],
        credits_used=2,
    )
    _log(client, acct, activity_type="enrichment", status="failed", error_message="boom")
    _log(client, acct, status="pending")
    _log(client, acct, shop_domain=OTHER_SHOP)
    h = acct.key_headers

    everything = client.get(ACTIVITIES, params={"shop_domain": SHOP}, headers=h).json()
    assert everything["total"] == 5 and everything["per_page"] == 10 and everything["pages"] == 1
    ids = [a["id"] for a in everything["activities"]]
    assert ids == sorted(ids, reverse=True)  # newest first
    assert everything["activities"][-1]["id"] == first["id"]
    assert "before" not in str(everything["activities"][-1]["products"])
    assert everything["activities"][-1]["products"][0]["fields"] == ["description"]

    page1 = client.get(ACTIVITIES, params={"shop_domain": SHOP, "per_page": 2}, headers=h).json()
    page3 = client.get(
        ACTIVITIES, params={"shop_domain": SHOP, "per_page": 2, "page": 3}, headers=h
    ).json()
    assert page1["total"] == 5 and page1["pages"] == 3 and len(page1["activities"]) == 2
    assert [a["id"] for a in page3["activities"]] == [first["id"]]
    assert client.get(ACTIVITIES, params={"page": 9}, headers=h).json()["activities"] == []

    completed = client.get(
        ACTIVITIES, params={"shop_domain": SHOP, "status": "completed"}, headers=h
    ).json()
    assert completed["total"] == 3
    tags = client.get(ACTIVITIES, params={"activity_type": "tags"}, headers=h).json()
    assert tags["total"] == 1 and tags["activities"][0]["products_count"] == 3
    assert client.get(ACTIVITIES, headers=h).json()["total"] == 6  # every shop

    summary = client.get(f"{ACTIVITIES}/summary", params={"shop_domain": SHOP}, headers=h).json()
    assert summary["completed_activities"] == 3
    assert summary["products_processed"] == 1 + 3 + 1
    assert summary["image_jobs"] == 1 and summary["failed_activities"] == 1
    assert summary["credits_used"] == 1 + 1 + 2
    assert summary["by_type"] == {"description": 1, "tags": 1, "images": 1}
    whole = client.get(f"{ACTIVITIES}/summary", headers=h).json()
    assert whole["completed_activities"] == 4 and whole["shop_domain"] is None


def test_activity_detail_patch_and_isolation(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=0)
    other = make_account(resources, credits=0)
    made = _log(client, acct, status="processing")
    url = f"{ACTIVITIES}/{made['id']}"

    detail = client.get(url, headers=acct.key_headers).json()
    assert detail["products"][0]["changes"] == [
        {"field": "description", "before": "old", "after": "new"}
    ]
    r = client.patch(
        url, params={"status": "failed", "error_message": "quota"}, headers=acct.key_headers
    )
    assert r.status_code == 200 and r.json()["status"] == "failed"
    assert r.json()["error_message"] == "quota"
    r = client.patch(url, params={"status": "completed"}, headers=acct.key_headers)
    assert r.json()["status"] == "completed" and r.json()["error_message"] == "quota"
    assert r.json()["updated_at"] >= detail["updated_at"]

    # Another account sees nothing of it.
    for call in (
        client.get(url, headers=other.key_headers),
        client.patch(url, params={"status": "failed"}, headers=other.key_headers),
    ):
        assert call.status_code == 404, call.text
    assert client.get(ACTIVITIES, headers=other.key_headers).json()["total"] == 0
    assert (
        client.get(f"{ACTIVITIES}/summary", headers=other.key_headers).json()[
            "completed_activities"
        ]
        == 0
    )

    # Refusals: a bad host name, an unknown type or status, out-of-range paging.
    bad = [
        client.post(
            ACTIVITIES,
            json={"shop_domain": "https://x.com/", "activity_type": "tags"},
            headers=acct.key_headers,
        ),
        client.post(
            ACTIVITIES,
            json={"shop_domain": "localhost", "activity_type": "tags"},
            headers=acct.key_headers,
        ),
        client.post(
            ACTIVITIES,
            json={"shop_domain": SHOP, "activity_type": "video"},
            headers=acct.key_headers,
        ),
        client.get(ACTIVITIES, params={"per_page": 101}, headers=acct.key_headers),
        client.get(ACTIVITIES, params={"page": 0}, headers=acct.key_headers),
        client.get(ACTIVITIES, params={"shop_domain": "bad domain"}, headers=acct.key_headers),
        client.patch(url, params={"status": "done"}, headers=acct.key_headers),
        client.get(f"{ACTIVITIES}/{2**70}", headers=acct.key_headers),
        client.patch(f"{ACTIVITIES}/-5", params={"status": "failed"}, headers=acct.key_headers),
        client.get(f"/api/v2/shopify/enrichment-jobs/{2**40}", headers=acct.key_headers),
    ]
    assert [b.status_code for b in bad] == [422] * len(bad)
    assert all("detail" in b.json() for b in bad)
    # An activity may name only the account's own enrichment jobs.
    r = client.post(
        ACTIVITIES,
        json={"shop_domain": SHOP, "activity_type": "tags", "job_id": 999999},
        headers=acct.key_headers,
    )
    assert r.status_code == 404
    assert client.get(ACTIVITIES, headers={"Authorization": "Bearer nope"}).status_code == 401
    # A NUL character (refused by PostgreSQL text columns) is dropped from messages.
    r = client.patch(url, params={"error_message": "bad\x00byte"}, headers=acct.key_headers)
    assert r.status_code == 200 and r.json()["error_message"] == "badbyte"
