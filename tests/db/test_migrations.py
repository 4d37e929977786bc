"""The migrations and the models describe the same schema: after ``upgrade head`` Alembic's
comparison finds nothing to add, drop or alter (on SQLite and PostgreSQL). A table or column
added to a model without its migration fails here, not in production."""

from __future__ import annotations

from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine

import pixelmill.db.models  # noqa: F401  (registers every table)
from pixelmill.db.base import Base

pytestmark = pytest.mark.both_databases


def _relevant(diff: Any) -> bool:
    # Server defaults written by older migrations for existing rows, and type spellings the
    # backends report differently, are not drift.
    kind = diff[0][0] if isinstance(diff, list) else diff[0]
    return kind not in {"modify_default", "modify_type", "modify_comment"}


def test_models_match_migrations(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"compare_type": False})
            diffs = [d for d in compare_metadata(ctx, Base.metadata) if _relevant(d)]
    finally:
        engine.dispose()
    assert diffs == []
