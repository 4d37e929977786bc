"""An account's credits as the tests check them: its balance, its reservations still held, and
whether the balance equals the sum of its ledger."""

from __future__ import annotations

from sqlalchemy import func, select

from pixelmill.credits import ledger
from pixelmill.db.models import CreditReservation
from pixelmill.resources import Resources


def balance_of(resources: Resources, user_id: int) -> int:
    with resources.db.transaction() as session:
        return ledger.balance(session, user_id)


def ledger_consistent(resources: Resources, user_id: int) -> bool:
    with resources.db.read() as session:
        return ledger.balance(session, user_id) == ledger.ledger_sum(session, user_id)


def held_reservations(resources: Resources, user_id: int) -> int:
    with resources.db.read() as session:
        return int(
            session.scalar(
                select(func.count())
                .select_from(CreditReservation)
                .where(CreditReservation.user_id == user_id, CreditReservation.status == "held")
            )
            or 0
        )


def consistent_balance(res: Resources, user_id: int) -> int:
    """The balance, equal to the ledger's sum, with no reservation left held."""
    with res.db.read() as session:
        balance = ledger.balance(session, user_id)
        assert balance == ledger.ledger_sum(session, user_id) >= 0
        held = session.scalars(
            select(CreditReservation.id).where(
                CreditReservation.user_id == user_id, CreditReservation.status == "held"
            )
        ).all()
        assert held == []
    return balance
