"""Fixtures: a database-backed test runs on a real database migrated by the real migrations:
a SQLite file or a PostgreSQL schema of its own, one per backend and pytest-xdist worker.

Which backends (``tests/support/databases.py``; ``tests/test_database_rule.py`` checks it):
- Behaviour that depends on the database runs on BOTH SQLite and PostgreSQL: the ledger,
  reservations and refunds, idempotency, migrations, concurrency, queries that sum or order,
  anything with a lock or a transaction. Such a test is marked ``both_databases`` (the
  function, or ``pytestmark`` for a data-layer module).
- Everything else (HTTP surfaces, engines, rendering, clients, browsers) runs ONCE, on
  PostgreSQL, what production runs.

``PIXELMILL_TEST_DATABASES`` (default ``sqlite,postgresql``) picks the backends; without
PostgreSQL in it, the once-only tests run on its first backend. Under ``CI=true`` an
unreachable PostgreSQL fails the run instead of skipping.

The suite runs on every core (pytest-xdist, ``scripts/test``): each worker has its own
databases, temporary folders and free ports; Celery tests use a queue name of their own.

The tests of the folders in ``JOB_SUITES`` run jobs: their ``settings`` are the fast job
settings (``tests/support/settings.py``). A folder's own ``conftest.py`` holds only what
differs there (tests/providers: routed apps; tests/web: a browser; tests/marketing: photos).
"""

from __future__ import annotations

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
from tests.support.servers import client_for
from tests.support.services import PRIMARY, postgres_schema
from tests.support.settings import job_settings, make_settings

pytest_plugins = [
    "tests.support.s3",
    "tests.support.replay",
    "tests.support.databases",
    "tests.support.selection",
    "tests.support.ordering",
]

TESTS = Path(__file__).parent


def pytest_configure(config: pytest.Config) -> None:
    """Refuse to test another checkout's code: a virtual environment shared between git
    worktrees imports ``pixelmill`` from the checkout it was installed from, so tests run in a
    second worktree would silently test the first one's ``src`` (set ``PYTHONPATH=src``)."""
    import pixelmill

    here = (TESTS.parent / "src").resolve()
    imported = Path(pixelmill.__file__).resolve()
    if not imported.is_relative_to(here):
        raise pytest.UsageError(
            f"these tests are in {TESTS.parent} but pixelmill is imported from {imported.parent};"
            " run them with PYTHONPATH=src"
        )


JOB_SUITES = frozenset(
    {
        "accounts",
        "advertising",
        "generation",
        "jobs",
        "library",
        "marketing",
        "queue",
        "storefront",
        "webhooks",
    }
)


@pytest.fixture(scope="session")
def database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A freshly migrated database for the whole session, per backend (the parameter that
    ``tests/support/databases.py`` gives)."""
    backend = getattr(request, "param", PRIMARY)
    if backend == "sqlite":
        path = tmp_path_factory.mktemp("db") / "pixelmill.db"
        url = f"sqlite:///{path}"
        upgrade(url)
        yield url
        return
    with postgres_schema() as url:
        upgrade(url)
        yield url


@pytest.fixture
def settings(database_url: str, tmp_path: Path, request: pytest.FixtureRequest) -> Settings:
    """The test settings; the fast job settings in the folders that run jobs."""
    runs_jobs = any(TESTS / suite in request.path.parents for suite in JOB_SUITES)
    build = job_settings if runs_jobs else make_settings
    return build(database_url, tmp_path / "data")


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
