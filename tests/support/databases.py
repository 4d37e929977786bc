"""Which database a test runs on: the rule of ``tests/conftest.py``'s docstring, applied.

A test that asks for ``database_url`` (directly or through ``settings``, ``app``, ``client``
...) runs once, on ``PRIMARY`` (PostgreSQL, what production runs); one marked
``both_databases`` (the function, its class or its module's ``pytestmark``) runs once per
backend in ``BACKENDS``. ``tests/test_database_rule.py`` keeps the data-layer modules marked."""

from __future__ import annotations

import pytest

from tests.support.services import BACKENDS, PRIMARY

BOTH = "both_databases"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{BOTH}: the behaviour depends on the database (ledger, reservations, idempotency,"
        " migrations, concurrency, queries, locks, transactions): run on every backend",
    )


def backends_for(node: pytest.Item) -> list[str]:
    """The backends a test (or its definition) runs on."""
    return list(BACKENDS) if node.get_closest_marker(BOTH) is not None else [PRIMARY]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "database_url" not in metafunc.fixturenames:
        return
    metafunc.parametrize(
        "database_url", backends_for(metafunc.definition), indirect=True, scope="session"
    )
