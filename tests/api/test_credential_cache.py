"""The credential cache (accounts/credentials.py) serves only what its bound allows: the
process that regenerates a key refuses the old one at once; a revocation made elsewhere (here:
straight in the database, as another process would) takes effect within
PIXELMILL_AUTH_CACHE_SECONDS; balances and plans shown are read fresh, never from the cache."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from pixelmill.app import create_app
from pixelmill.credits import ledger
from pixelmill.db.base import utcnow
from pixelmill.db.models import ApiKey, User
from pixelmill.resources import Resources, build_resources
from pixelmill.worker import wire
from tests.support.accounts import login, make_account
from tests.support.servers import client_for
from tests.support.settings import make_settings

TTL = 0.6


@pytest.fixture
def cached(database_url: str, tmp_path: Path) -> Iterator[tuple[TestClient, Resources]]:
    settings = make_settings(database_url, tmp_path / "data", auth_cache_seconds=TTL)
    res = wire(build_resources(settings))
    try:
        with client_for(create_app(settings, res)) as client:
            yield client, res
    finally:
        res.close()


def test_revocation_bounds(cached: tuple[TestClient, Resources]) -> None:
    client, res = cached
    acct = make_account(res, credits=10)
    headers = acct.key_headers
    assert client.get("/api/v2/account", headers=headers).status_code == 200  # now cached

    # Balance and plan changed by someone else: shown at once.
    with res.db.transaction() as session:
        ledger.grant(session, acct.id, 5, kind="purchase")
        session.execute(update(User).where(User.id == acct.id).values(plan="pro"))
    body = client.get("/api/v2/account", headers=headers).json()
    assert (body["credits"], body["total_purchased"], body["subscription_tier"]) == (15, 5, "pro")
    assert client.get("/api/v1/credits", headers=headers).json()["credits"] == 15
    assert client.get("/api/v1/user", headers=headers).json()["credits"] == 15

    # Revoked by another process: refused within the bound.
    with res.db.transaction() as session:
        session.execute(update(ApiKey).where(ApiKey.user_id == acct.id).values(revoked_at=utcnow()))
    revoked_at = time.monotonic()
    while client.get("/api/v2/account", headers=headers).status_code == 200:
        assert time.monotonic() - revoked_at < TTL + 0.5, "revocation outlived the cache bound"
        time.sleep(0.05)
    assert client.get("/api/v2/account", headers=headers).status_code == 401


def test_regenerate_refuses_the_old_key_at_once(cached: tuple[TestClient, Resources]) -> None:
    client, res = cached
    acct = make_account(res, credits=10)
    token = {"Authorization": f"Bearer {login(client, acct.email, acct.password)}"}
    assert client.get("/api/v2/account", headers=acct.key_headers).status_code == 200
    new_key = client.post("/api/auth/regenerate-token", headers=token).json()["api_key"]
    assert client.get("/api/v2/account", headers=acct.key_headers).status_code == 401
    assert (
        client.get("/api/v2/account", headers={"Authorization": f"Bearer {new_key}"}).status_code
        == 200
    )
