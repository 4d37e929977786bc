"""Accounts made through the real account service, and logging in through the real surface."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from fastapi.testclient import TestClient

from pixelmill.accounts import service as accounts
from pixelmill.credits import ledger
from pixelmill.resources import Resources


def unique_email(tag: str = "user") -> str:
    return f"{tag}-{uuid.uuid4().hex[:10]}@example.com"


@dataclass
class Account:
    id: int
    email: str
    password: str
    api_key: str

    @property
    def key_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}


def make_account(
    resources: Resources, credits: int = 100, plan: str = "enterprise", tag: str = "user"
) -> Account:
    """An account created through the real service, with ``credits`` in total."""
    email, password = unique_email(tag), "correct horse"
    with resources.db.transaction() as session:
        new = accounts.register(session, resources.secret, email, password, free_credits=0)
        if credits:
            ledger.grant(session, new.user.id, credits, memo="test")
        accounts.set_plan(session, new.user, plan)
        return Account(new.user.id, email, password, new.api_key)


def login(client: TestClient, email: str, password: str = "secret-pw") -> str:
    """A dashboard session token (``POST /api/auth/login``)."""
    r = client.post("/api/auth/login", data={"username": email, "password": password})
    assert r.status_code == 200, r.text
    assert r.json()["token_type"] == "bearer"
    token: str = r.json()["access_token"]
    return token
