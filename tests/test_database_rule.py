"""The rule of ``tests/conftest.py``'s docstring, kept honest: behaviour that depends on the
database runs on SQLite and PostgreSQL (marked ``both_databases``), everything else once.

Two checks read the test files themselves: the data-layer modules carry the marker for every
test in them, and a test whose name says it exercises the ledger, idempotency, a race, a
migration, a rollback or the sweeper carries it too. A third checks that the collection hook
gives a marked test every backend and an unmarked one the primary backend only."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.databases import BOTH, backends_for
from tests.support.services import BACKENDS, PRIMARY

ROOT = Path(__file__).resolve().parents[1]
TEST_DIRS = (ROOT / "tests", ROOT / "clients" / "python" / "tests")

DATA_LAYER = (
    "tests/db/test_migrations.py",
    "tests/db/test_number_migration.py",
    "tests/credits/test_ledger.py",
    "tests/credits/test_usage.py",
    "tests/jobs/test_concurrency.py",
    "tests/jobs/test_idempotency.py",
    "tests/jobs/test_lifecycle.py",
    "tests/operations/test_accounting.py",
    "tests/queue/test_inline.py",
    "tests/storefront/test_settling.py",
)
"""Modules whose every test is about the data layer: migrations, the ledger and its sums,
reservations and leases, idempotency keys, concurrent writers, commit and rollback."""

DATABASE_WORDS = re.compile(
    r"(^|_)(concurrent|racing|idempotency|ledger|rollback|migration|transaction|sweeper|owed)"
    r"(_|$)|grants_once|charged_once|charges_once"
)
"""Words in a database-backed test's name that say its behaviour depends on the database."""


def _module_marked(path: Path) -> bool:
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            return f"pytest.mark.{BOTH}" in ast.unparse(node.value)
    return False


def _backends(nodeids: list[str], params: list[str]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for nodeid, backend in zip(nodeids, params, strict=True):
        found.setdefault(nodeid.split("[")[0], set()).add(backend)
    return found


def _test_files() -> list[Path]:
    return sorted(p for d in TEST_DIRS for p in d.rglob("test_*.py"))


def _params(item: pytest.Item) -> dict[str, object]:
    callspec = getattr(item, "callspec", None)
    return dict(callspec.params) if callspec is not None else {}


def _collected_backends(session: pytest.Session) -> dict[str, set[str]]:
    """``path::test`` -> the backends the whole suite's collection gives it: this session's
    items when it collected the whole suite (as ``scripts/test`` does), else a real
    ``pytest --collect-only`` of both test folders."""
    files = {str(p.relative_to(ROOT)) for p in _test_files() if "def test_" in p.read_text()}
    whole = files <= {item.nodeid.split("::")[0] for item in session.items}
    if whole and set(BACKENDS) == {"sqlite", "postgresql"}:
        given = [(item.nodeid, _params(item).get("database_url")) for item in session.items]
        return _backends([n for n, b in given if b], [str(b) for _, b in given if b])
    env = {**os.environ, "PIXELMILL_TEST_DATABASES": "sqlite,postgresql"}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    nodeids, params = [], []
    for line in out.splitlines():
        match = re.fullmatch(r"(\S+?::\S+?)\[(.*)\]", line.strip())
        if not match:
            continue
        for part in match.group(2).split("-"):
            if part in ("sqlite", "postgresql"):
                nodeids.append(match.group(1))
                params.append(part)
    return _backends(nodeids, params)


def test_data_layer_modules_run_on_both_databases() -> None:
    unmarked = [name for name in DATA_LAYER if not _module_marked(ROOT / name)]
    assert not unmarked, f"add `pytestmark = pytest.mark.{BOTH}` to {unmarked}"


@pytest.mark.slow
def test_database_tests_named_for_the_data_layer_run_on_both_and_the_rest_once(
    request: pytest.FixtureRequest,
) -> None:
    collected = _collected_backends(request.session)
    both = {test for test, backends in collected.items() if len(backends) == 2}
    once = {test for test, backends in collected.items() if backends == {"postgresql"}}
    assert both | once == set(collected)  # one backend is always PostgreSQL
    named = {test for test in collected if DATABASE_WORDS.search(test.split("::")[-1])}
    assert len(named) >= 15  # the words still find the ledger, idempotency, migration tests
    assert not named - both, f"mark these @pytest.mark.{BOTH} (or rename them): {named - both}"
    layer = {test for test in collected if test.split("::")[0] in DATA_LAYER}
    assert layer and layer <= both
    assert len(once) > 2 * len(both)  # the rule's point: most tests run once


def test_the_hook_gives_an_unmarked_test_the_primary_backend(
    request: pytest.FixtureRequest,
) -> None:
    assert backends_for(request.node) == [PRIMARY]
    assert ("postgresql" if "postgresql" in BACKENDS else BACKENDS[0]) == PRIMARY
