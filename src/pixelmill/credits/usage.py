"""Credits spent on work, read off the ledger: for every reservation (a synchronous call, a
job, a batch) what it took less what it gave back, per day and purpose. Grants, purchases and
sign-up credits are ledger entries without a reservation, so they are never usage: usage plus
those entries add up to the ledger."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from pixelmill.db.models import CreditLedgerEntry, CreditReservation


@dataclass(frozen=True)
class Spend:
    """What one account's work of one purpose (``sync:<operation>``, ``job:<id>``,
    ``batch:<id>``) spent on one day (UTC)."""

    user_id: int
    day: date
    purpose: str
    credits: int


def spends(
    session: Session, start: datetime, end: datetime, user_id: int | None = None
) -> list[Spend]:
    """The spends of ledger entries written in ``[start, end)`` (every account's when
    ``user_id`` is None)."""
    entry, held = CreditLedgerEntry, CreditReservation
    day = func.date(entry.created_at)
    query = (
        select(entry.user_id, day, held.purpose, func.sum(entry.delta))
        .join(held, held.id == entry.reservation_id)
        .where(entry.created_at >= start, entry.created_at < end)
        .group_by(entry.user_id, day, held.purpose)
    )
    if user_id is not None:
        query = query.where(entry.user_id == user_id)
    return [
        Spend(int(uid), date.fromisoformat(str(d)[:10]), str(purpose), -int(total))
        for uid, d, purpose, total in session.execute(query)
        if int(total) != 0
    ]


def other_entries(
    session: Session, start: datetime, end: datetime, user_id: int | None = None
) -> int:
    """The sum of the entries that are not work (grants, purchases, sign-up credits) in
    ``[start, end)``."""
    entry = CreditLedgerEntry
    query = select(func.coalesce(func.sum(entry.delta), 0)).where(
        entry.reservation_id.is_(None), entry.created_at >= start, entry.created_at < end
    )
    if user_id is not None:
        query = query.where(entry.user_id == user_id)
    return int(session.scalar(query) or 0)
