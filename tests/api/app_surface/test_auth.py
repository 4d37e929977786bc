"""Registration, login, /me with either credential, key regeneration."""

from __future__ import annotations

from fastapi.testclient import TestClient

from pixelmill.resources import Resources
from tests.support.accounts import login, make_account, unique_email


def register(client: TestClient, email: str, password: str = "secret-pw") -> dict[str, object]:
    r = client.post("/api/auth/register", json={"email": email, "password": password})
    assert r.status_code == 200, r.text
    body: dict[str, object] = r.json()
    return body


def test_register_gives_key_and_free_credits(client: TestClient) -> None:
    email = unique_email()
    body = register(client, email.upper())
    assert body["email"] == email  # normalised to lower case
    assert body["credits"] == 10
    assert body["subscription_tier"] == "free"
    assert isinstance(body["api_key"], str) and body["api_key"].startswith("pk_live_")


def test_duplicate_email_is_409_with_detail(client: TestClient) -> None:
    email = unique_email()
    register(client, email)
    r = client.post("/api/auth/register", json={"email": email, "password": "another-pw"})
    assert r.status_code == 409
    assert r.headers["content-type"].startswith("application/json")
    assert "already exists" in r.json()["detail"]


def test_register_validation(client: TestClient) -> None:
    r = client.post("/api/auth/register", json={"email": "not-an-email", "password": "secret"})
    assert r.status_code == 422
    r = client.post("/api/auth/register", json={"email": unique_email(), "password": "short"})
    assert r.status_code == 422
    r = client.post(
        "/api/auth/register", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 422


def test_login_me_with_jwt_and_key_then_regenerate(client: TestClient) -> None:
    email = unique_email()
    key = register(client, email)["api_key"]
    token = login(client, email)

    by_jwt = client.get("/api/auth/me", headers={"Authorization": f"Bearer {token}"})
    by_key = client.get("/api/auth/me", headers={"Authorization": f"Bearer {key}"})
    assert by_jwt.status_code == by_key.status_code == 200
    assert by_jwt.json()["email"] == by_key.json()["email"] == email
    assert set(by_key.json()) >= {"id", "email", "credits", "is_active", "subscription_tier"}

    r = client.post("/api/auth/regenerate-token", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200
    new_key = r.json()["token"]
    assert new_key.startswith("pk_live_") and new_key != key

    old = client.get("/api/v2/account", headers={"Authorization": f"Bearer {key}"})
    assert old.status_code == 401
    assert old.json()["detail"]
    new = client.get("/api/v2/account", headers={"Authorization": f"Bearer {new_key}"})
    assert new.status_code == 200 and new.json()["email"] == email


def test_regenerate_requires_jwt_not_key(client: TestClient) -> None:
    key = register(client, unique_email())["api_key"]
    r = client.post("/api/auth/regenerate-token", headers={"Authorization": f"Bearer {key}"})
    assert r.status_code == 401


def test_wrong_password_and_unknown_user_are_401(client: TestClient) -> None:
    email = unique_email()
    register(client, email)
    for user, pw in ((email, "wrong-password"), (unique_email(), "secret-pw")):
        r = client.post("/api/auth/login", data={"username": user, "password": pw})
        assert r.status_code == 401
        assert r.json()["detail"] == "Incorrect email or password"


def test_missing_and_garbage_credentials_are_401_json(client: TestClient) -> None:
    for headers in (
        {},
        {"Authorization": "Bearer pk_live_nope"},
        {"Authorization": "Bearer not.a.jwt"},
        {"Authorization": "Basic Zm9vOmJhcg=="},
        {"Authorization": "Bearer"},
    ):
        for path in ("/api/v2/account", "/api/v1/user", "/api/auth/me", "/api/credits/balance"):
            r = client.get(path, headers=headers)
            assert r.status_code == 401, (path, headers, r.text)
            assert r.headers["content-type"].startswith("application/json")
            assert isinstance(r.json()["detail"], str)


def test_expired_jwt_is_rejected(client: TestClient, resources: Resources) -> None:
    from datetime import timedelta

    from pixelmill.accounts.security import create_access_token

    acct = make_account(resources)
    token = create_access_token(resources.secret, acct.id, timedelta(seconds=-5))
    r = client.get("/api/auth/me", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 401
    forged = create_access_token("another-secret-" + "y" * 30, acct.id, timedelta(minutes=5))
    assert (
        client.get("/api/auth/me", headers={"Authorization": f"Bearer {forged}"}).status_code == 401
    )


def test_api_key_is_stored_hashed(client: TestClient, resources: Resources) -> None:
    from sqlalchemy import select

    from pixelmill.db.models import ApiKey

    key = register(client, unique_email())["api_key"]
    assert isinstance(key, str)
    with resources.db.transaction() as session:
        stored = session.scalars(select(ApiKey.key_hash)).all()
    assert key not in stored
    assert all(len(h) == 64 for h in stored)
