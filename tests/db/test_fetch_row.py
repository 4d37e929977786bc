"""``Database.fetch_row``, the authenticated hot path's one read: on SQLite it runs the
statement straight on the driver (compiled once, literals bound), and answers exactly what the
SQLAlchemy path answers; a statement whose types need processing still goes through SQLAlchemy."""

from __future__ import annotations

import asyncio
from datetime import datetime

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import bindparam, select

from pixelmill.credits import ledger
from pixelmill.db.models import User
from pixelmill.resources import Resources
from tests.support.accounts import make_account

pytestmark = pytest.mark.both_databases


def test_fetch_row_answers_what_sqlalchemy_answers(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=7)
    with resources.db.transaction() as session:
        ledger.grant(session, acct.id, 5, memo="bought", kind="purchase")
    params = {"user_id": acct.id}
    fast = asyncio.run(resources.db.fetch_row(ledger.CREDIT_TOTALS, params))
    with resources.db.read() as session:
        slow = session.execute(ledger.CREDIT_TOTALS, params).first()
    assert fast is not None and slow is not None
    assert tuple(fast) == tuple(slow) == (12, 5, "enterprise")
    totals = ledger.CreditTotals.of(fast)
    assert (totals.credits, totals.total_purchased, totals.plan) == (12, 5, "enterprise")
    assert asyncio.run(resources.db.fetch_row(ledger.CREDIT_TOTALS, {"user_id": 0})) is None
    body = client.get("/api/v2/account", headers=acct.key_headers).json()
    assert (body["credits"], body["total_purchased"]) == (12, 5)


def test_a_statement_with_typed_columns_keeps_its_types(resources: Resources) -> None:
    acct = make_account(resources)
    statement = select(User.created_at).where(User.id == bindparam("user_id"))
    row = asyncio.run(resources.db.fetch_row(statement, {"user_id": acct.id}))
    assert row is not None and isinstance(row[0], datetime)
