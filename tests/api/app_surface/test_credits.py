"""Balance (JWT), pricing (open), v1 credits and user (key), v2 account (key)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from pixelmill.credits import ledger
from pixelmill.resources import Resources
from tests.support.accounts import make_account


def test_balance_counts_purchases_only_as_purchased(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=7)
    with resources.db.transaction() as session:
        ledger.grant(session, acct.id, 100, kind="purchase")
    token = client.post(
        "/api/auth/login", data={"username": acct.email, "password": acct.password}
    ).json()["access_token"]
    r = client.get("/api/credits/balance", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200
    assert r.json() == {"credits": 107, "total_purchased": 100}
    v1 = client.get("/api/v1/credits", headers=acct.key_headers)
    assert v1.json() == {"credits": 107, "total_purchased": 100}


def test_pricing_is_open_and_lists_plans(client: TestClient) -> None:
    r = client.get("/api/credits/pricing")
    assert r.status_code == 200
    plans = {p["id"]: p for p in r.json()["plans"]}
    assert plans["free"]["requests_per_minute"] == 10
    assert plans["free"]["requests_per_day"] == 50
    assert plans["free"]["max_file_size_mb"] == 5
    assert plans["pro"]["requests_per_day"] == 50_000
    assert plans["enterprise"]["requests_per_day"] is None
    assert plans["enterprise"]["max_file_size_mb"] == 100
    assert r.json()["operations"]["upscale_8x"] == 2
    assert r.json()["credit_packs"]


def test_v1_user_and_v2_account(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=42, plan="starter")
    r = client.get("/api/v1/user", headers=acct.key_headers)
    assert r.status_code == 200
    assert r.json() == {"id": acct.id, "email": acct.email, "credits": 42, "is_active": True}
    r = client.get("/api/v2/account", headers=acct.key_headers)
    body = r.json()
    assert body["credits"] == 42 and body["subscription_tier"] == "starter"
    assert body["rate_limits"] == {
        "requests_per_minute": 60,
        "requests_per_day": 5000,
        "max_file_size_mb": 10,
    }
