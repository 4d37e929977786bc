"""Reservations of synchronous runs: settled once, and released by the sweep when the request
that took them died."""

from __future__ import annotations

from sqlalchemy import update

from pixelmill.db.base import utcnow
from pixelmill.db.models import CreditReservation, ProcessingRecord
from pixelmill.operations.accounting import STALE_RESERVATION_AFTER, Charge
from pixelmill.resources import Resources
from tests.support import balance_of, make_account


def _charge(user_id: int, processing_id: str) -> Charge:
    return Charge(processing_id, user_id, "convert", "v2", 1, 20, 10)


def test_sweep_releases_only_stale_holds(resources: Resources) -> None:
    acct = make_account(resources, credits=5)
    accounting = resources.pipeline.accounting
    stale = accounting.reserve(_charge(acct.id, "a" * 32))
    fresh = accounting.reserve(_charge(acct.id, "b" * 32))
    assert balance_of(resources, acct.id) == 3
    with resources.db.transaction() as session:
        session.execute(
            update(CreditReservation)
            .where(CreditReservation.id == stale.reservation_id)
            .values(created_at=utcnow() - STALE_RESERVATION_AFTER - STALE_RESERVATION_AFTER / 10)
        )

    assert resources.pipeline.sweep()["reservations_released"] == 1
    assert balance_of(resources, acct.id) == 4
    assert resources.pipeline.sweep()["reservations_released"] == 0  # exactly once

    accounting.fail(fresh, RuntimeError("engine died"))
    assert balance_of(resources, acct.id) == 5
    with resources.db.read() as session:
        row = session.get(ProcessingRecord, "b" * 32)
        assert row is not None
        assert (row.status, row.credits_used, row.error) == ("failed", 0, "engine died")


def test_complete_captures_and_records(resources: Resources) -> None:
    acct = make_account(resources, credits=3)
    accounting = resources.pipeline.accounting
    held = accounting.reserve(_charge(acct.id, "c" * 32))
    remaining = accounting.complete(held, 0.1234, None, {"method": "test"})
    assert remaining == 2 == balance_of(resources, acct.id)
    assert resources.pipeline.sweep()["reservations_released"] == 0
    with resources.db.read() as session:
        row = session.get(ProcessingRecord, "c" * 32)
        assert row is not None
        assert (row.status, row.credits_used, row.processing_time) == ("completed", 1, 0.123)
        assert (row.input_width, row.input_height, row.details) == (20, 10, {"method": "test"})
