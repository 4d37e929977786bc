"""``pytest --fast`` (``scripts/test --fast``): the development loop's selection.

It keeps the unit and engine tests and leaves out every test that needs a database (it asks
for ``database_url``: an app, a client, a live server), a server process or a browser
(``FULL_ONLY`` folders), PostgreSQL or Redis, or is marked ``slow``. CI runs everything."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FULL_ONLY = tuple(
    ROOT / part
    for part in (
        "tests/web",
        "tests/deploy",
        "tests/multinode",
        "tests/clients",
        "clients/python/tests",
    )
)
"""Folders whose tests start servers, workers, a browser or the public clients."""
FULL_ONLY_MARKS = ("slow", "postgres", "redis")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast",
        action="store_true",
        help="unit and engine tests only: no database, servers, browser or slow tests",
    )


def full_only(item: pytest.Item) -> bool:
    """Whether ``--fast`` leaves this test out."""
    if "database_url" in getattr(item, "fixturenames", ()):
        return True
    if any(item.get_closest_marker(mark) is not None for mark in FULL_ONLY_MARKS):
        return True
    path = Path(str(item.path)).resolve()
    return any(path.is_relative_to(folder) for folder in FULL_ONLY)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("fast"):
        return
    dropped = [item for item in items if full_only(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not full_only(item)]
