"""Test helpers shared across the suite: real services, real servers, no mocks."""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from pixelmill.accounts import service as accounts
from pixelmill.credits import ledger
from pixelmill.resources import Resources

PG_URL = os.environ.get(
    "PIXELMILL_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("PIXELMILL_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_service(name: str, host: str, port: int) -> None:
    """Skip when a local service is down, except under CI=true, where that is a failure."""
    try:
        with socket.create_connection((host, port), timeout=2):
            return
    except OSError as exc:
        message = f"{name} is not reachable on {host}:{port}: {exc}"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)


@contextmanager
def postgres_schema(prefix: str = "pm_test") -> Iterator[str]:
    """A new, empty schema on the test PostgreSQL (dropped afterwards); yields a database URL
    whose search_path is that schema. The caller migrates it."""
    require_service("PostgreSQL", "127.0.0.1", 5432)
    schema = f"{prefix}_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    sep = "&" if "?" in PG_URL else "?"
    try:
        yield f"{PG_URL}{sep}options=-csearch_path%3D{schema}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


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


def balance_of(resources: Resources, user_id: int) -> int:
    with resources.db.transaction() as session:
        return ledger.balance(session, user_id)


def wait_until(predicate: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05) -> Any:
    """Poll ``predicate`` until it returns something truthy or the deadline passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)


@contextmanager
def live_server(app: FastAPI) -> Iterator[str]:
    """Run the app under a real uvicorn on 127.0.0.1 (ephemeral port); yields the base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_until(lambda: server.started, timeout=20)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        sock.close()


def client_for(app: FastAPI) -> TestClient:
    return TestClient(app, raise_server_exceptions=False)
