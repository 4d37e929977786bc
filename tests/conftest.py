"""Fixtures: every database-backed test runs on a real SQLite file AND a real PostgreSQL
database (its own schema per run), migrated by the real migrations.

``PIXELMILL_TEST_DATABASES`` (default ``sqlite,postgresql``) picks the backends. Under
``CI=true`` an unreachable PostgreSQL fails the run instead of skipping.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from pixelmill.app import create_app
from pixelmill.config import Settings
from pixelmill.db.migrate import upgrade
from pixelmill.resources import Resources, build_resources
from pixelmill.worker import wire
from tests.support import client_for, postgres_schema

TEST_SECRET = "test-secret-" + "x" * 40
BACKENDS = [
    b.strip()
    for b in os.environ.get("PIXELMILL_TEST_DATABASES", "sqlite,postgresql").split(",")
    if b.strip()
]


@pytest.fixture(scope="session", params=BACKENDS)
def database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A freshly migrated database for the whole session, per backend."""
    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("db") / "pixelmill.db"
        url = f"sqlite:///{path}"
        upgrade(url)
        yield url
        return
    with postgres_schema() as url:
        upgrade(url)
        yield url


def make_settings(database_url: str, data_dir: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "env": "testing",
        "secret_key": TEST_SECRET,
        "database_url": database_url,
        "data_dir": data_dir,
        "allow_loopback_urls": True,
        "free_credits": 10,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return make_settings(database_url, tmp_path / "data")


@pytest.fixture
def resources(settings: Settings) -> Iterator[Resources]:
    res = wire(build_resources(settings))
    yield res
    res.close()


@pytest.fixture
def app(settings: Settings, resources: Resources) -> FastAPI:
    return create_app(settings, resources)


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with client_for(app) as c:
        yield c
