"""The credit ledger: the only code that changes a balance.

Every change writes a ``credit_ledger`` row and updates ``users.credits`` in the caller's
transaction, so ``balance == sum(ledger)`` holds whenever a transaction commits. Balances never go
negative: a reservation is a conditional ``UPDATE ... WHERE credits >= n``, atomic on SQLite (one
writer at a time) and on PostgreSQL (the row lock re-checks the condition).

Work in flight holds a *reservation*: ``reserve`` takes the credits, ``capture`` marks part of them
as used (no balance change: they are already taken), and ``release`` settles the reservation
exactly once, giving back whatever was not captured. ``settle`` is capture-then-release.
Services never commit; the caller's scope does.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from pixelmill.db.base import utcnow
from pixelmill.db.models import CreditLedgerEntry, CreditReservation, User
from pixelmill.errors import InsufficientCredits, NotFound


@dataclass(frozen=True)
class Reservation:
    id: str
    user_id: int
    amount: int


def _add_entry(
    session: Session,
    user_id: int,
    delta: int,
    kind: str,
    memo: str = "",
    reservation_id: str | None = None,
) -> None:
    session.add(
        CreditLedgerEntry(
            user_id=user_id, delta=delta, kind=kind, memo=memo, reservation_id=reservation_id
        )
    )


def grant(session: Session, user_id: int, amount: int, kind: str = "grant", memo: str = "") -> int:
    """Add credits (admin grant, purchase, sign-up bonus). Returns the new balance."""
    if amount <= 0:
        raise ValueError("grant amount must be positive")
    row = session.execute(
        update(User)
        .where(User.id == user_id)
        .values(credits=User.credits + amount)
        .returning(User.credits)
    ).first()
    if row is None:
        raise NotFound("User not found")
    _add_entry(session, user_id, amount, kind, memo)
    return int(row[0])


def reserve(session: Session, user_id: int, amount: int, purpose: str) -> Reservation:
    """Hold ``amount`` credits for work about to run, or raise InsufficientCredits."""
    if amount <= 0:
        raise ValueError("reservation amount must be positive")
    row = session.execute(
        update(User)
        .where(User.id == user_id, User.credits >= amount)
        .values(credits=User.credits - amount)
        .returning(User.credits)
    ).first()
    if row is None:
        have = session.scalar(select(User.credits).where(User.id == user_id))
        raise InsufficientCredits(
            f"Insufficient credits: this needs {amount}, the balance is {have or 0}"
        )
    rid = uuid.uuid4().hex
    session.add(
        CreditReservation(id=rid, user_id=user_id, amount=amount, captured=0, purpose=purpose)
    )
    session.flush()
    _add_entry(session, user_id, -amount, "reserve", purpose, rid)
    return Reservation(rid, user_id, amount)


def capture(session: Session, reservation_id: str, amount: int) -> bool:
    """Mark ``amount`` more of a held reservation as used. Returns False (and changes nothing)
    if the reservation is already settled or the capture would exceed what was reserved."""
    if amount < 0:
        raise ValueError("capture amount must not be negative")
    if amount == 0:
        return True
    result = session.execute(
        update(CreditReservation)
        .where(
            CreditReservation.id == reservation_id,
            CreditReservation.status == "held",
            CreditReservation.captured + amount <= CreditReservation.amount,
        )
        .values(captured=CreditReservation.captured + amount)
        .returning(CreditReservation.id)
    ).first()
    return result is not None


def release(session: Session, reservation_id: str) -> int:
    """Settle a reservation: give back what was not captured. Runs its effect exactly once;
    a second call returns 0 and changes nothing. Returns the credits given back."""
    row = session.execute(
        update(CreditReservation)
        .where(CreditReservation.id == reservation_id, CreditReservation.status == "held")
        .values(status="settled", settled_at=utcnow())
        .returning(CreditReservation.user_id, CreditReservation.amount, CreditReservation.captured)
    ).first()
    if row is None:
        return 0
    user_id, amount, captured = int(row[0]), int(row[1]), int(row[2])
    refund = amount - captured
    if refund > 0:
        session.execute(
            update(User).where(User.id == user_id).values(credits=User.credits + refund)
        )
        _add_entry(session, user_id, refund, "release", "unused credits returned", reservation_id)
    return refund


def settle(session: Session, reservation_id: str, used: int) -> int:
    """Capture ``used`` credits and release the rest. Returns the credits actually kept."""
    captured_ok = capture(session, reservation_id, used)
    release(session, reservation_id)
    return used if captured_ok else 0


def balance(session: Session, user_id: int) -> int:
    value = session.scalar(select(User.credits).where(User.id == user_id))
    if value is None:
        raise NotFound("User not found")
    return int(value)


def ledger_sum(session: Session, user_id: int) -> int:
    return int(
        session.scalar(
            select(func.coalesce(func.sum(CreditLedgerEntry.delta), 0)).where(
                CreditLedgerEntry.user_id == user_id
            )
        )
        or 0
    )


def total_purchased(session: Session, user_id: int) -> int:
    return int(
        session.scalar(
            select(func.coalesce(func.sum(CreditLedgerEntry.delta), 0)).where(
                CreditLedgerEntry.user_id == user_id, CreditLedgerEntry.kind == "purchase"
            )
        )
        or 0
    )


def release_stale(session: Session, older_than: datetime, purpose_prefix: str = "sync:") -> int:
    """Release held reservations of synchronous work that never settled (the process died
    mid-request). Jobs have their own sweeper. Returns how many were released."""
    ids = session.scalars(
        select(CreditReservation.id).where(
            CreditReservation.status == "held",
            CreditReservation.created_at < older_than,
            CreditReservation.purpose.startswith(purpose_prefix),
        )
    ).all()
    for rid in ids:
        release(session, rid)
    return len(ids)
