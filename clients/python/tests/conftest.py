"""Fixtures of the client's tests: a LIVE pixelmill (real uvicorn on 127.0.0.1, real SQLite
and PostgreSQL through the server suite's ``database_url`` machinery, in-process job
workers), and accounts made through the real account service.

The client itself never imports the server; only these tests do, to start one."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:  # the server suite's helpers (tests.support, tests.conftest)
    sys.path.insert(0, str(ROOT))

from tests.conftest import database_url  # noqa: E402, F401  (the fixture, per backend)
from tests.support.servers import live_server  # noqa: E402
from tests.support.settings import job_settings  # noqa: E402

from client_harness import Live  # noqa: E402
from pixelmill.app import create_app  # noqa: E402
from pixelmill.resources import build_resources  # noqa: E402
from pixelmill.worker import wire  # noqa: E402


@pytest.fixture(scope="session")
def live(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:  # noqa: F811
    """One live server per database backend, shared by the client's tests (each test makes
    its own account, so they do not see each other's work)."""
    settings = job_settings(database_url, tmp_path_factory.mktemp("client-data"))
    resources = wire(build_resources(settings))
    try:
        with live_server(create_app(settings, resources)) as url:
            yield Live(url, resources)
    finally:
        resources.close()
