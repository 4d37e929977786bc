"""The local services the tests use for real (PostgreSQL, Redis): where they are, and a skip
when one is down, except under ``CI=true``, where that is a failure."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import create_engine, text

PG_URL = os.environ.get(
    "PIXELMILL_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("PIXELMILL_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
BACKENDS = [
    b.strip()
    for b in os.environ.get("PIXELMILL_TEST_DATABASES", "sqlite,postgresql").split(",")
    if b.strip()
]
"""The database backends of the suite (``PIXELMILL_TEST_DATABASES``): a test marked
``both_databases`` runs on each (``tests/support/databases.py``)."""
PRIMARY = "postgresql" if "postgresql" in BACKENDS else BACKENDS[0]
"""The one backend of a test whose behaviour does not depend on the database."""


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
