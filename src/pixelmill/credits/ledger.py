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
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from sqlalchemy import ColumnElement, bindparam, func, select, update
from sqlalchemy.orm import Session

from pixelmill.db.base import utcnow
from pixelmill.db.models import CreditLedgerEntry, CreditReservation, User
from pixelmill.errors import InsufficientCredits, NotFound
from pixelmill.observability.metrics import CREDITS_CHARGED, CREDITS_REFUNDED
from pixelmill.queue.base import run_after_commit


@dataclass(frozen=True)
class Reservation:
    id: str
    user_id: int
    amount: int


@dataclass(frozen=True)
class Settlement:
    """A reservation this call settled: whose, what for, and the credits given back."""

    id: str
    user_id: int
    purpose: str
    context: dict[str, Any] | None
    refund: int


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


def _move(session: Session, user_id: int, delta: int) -> int | None:
    """Add ``delta`` credits to the balance in one conditional update, a negative one only
    where the balance covers it: the new balance, or ``None`` when nothing changed."""
    where = [User.id == user_id] + ([User.credits >= -delta] if delta < 0 else [])
    row = session.execute(
        update(User).where(*where).values(credits=User.credits + delta).returning(User.credits)
    ).first()
    return None if row is None else int(row[0])


def grant(session: Session, user_id: int, amount: int, kind: str = "grant", memo: str = "") -> int:
    """Add credits (admin grant, purchase, sign-up bonus). Returns the new balance."""
    if amount <= 0:
        raise ValueError("grant amount must be positive")
    balance = _move(session, user_id, amount)
    if balance is None:
        raise NotFound("User not found")
    _add_entry(session, user_id, amount, kind, memo)
    return balance


def take_back(
    session: Session, user_id: int, amount: int, kind: str = "revoke", memo: str = ""
) -> int:
    """Take up to ``amount`` credits back (a refunded purchase), as far as the balance allows:
    never below zero, credits held for work in flight untouched. Returns what was taken (the
    rest is the caller's to record as owed)."""
    if amount <= 0:
        raise ValueError("take-back amount must be positive")
    while True:
        have = session.scalar(select(User.credits).where(User.id == user_id))
        if have is None:
            raise NotFound("User not found")
        take = min(amount, int(have))
        if take <= 0:
            return 0
        # Conditional, like a reservation: a concurrent debit between the read and this write
        # makes it miss, and the loop reads the balance again.
        if _move(session, user_id, -take) is not None:
            _add_entry(session, user_id, -take, kind, memo)
            return take


def reserve(
    session: Session,
    user_id: int,
    amount: int,
    purpose: str,
    context: dict[str, Any] | None = None,
) -> Reservation:
    """Hold ``amount`` credits for work about to run, or raise InsufficientCredits.
    ``context`` is kept with the reservation for whoever settles it if its holder dies."""
    if amount <= 0:
        raise ValueError("reservation amount must be positive")
    if _move(session, user_id, -amount) is None:
        have = int(session.scalar(select(User.credits).where(User.id == user_id)) or 0)
        raise InsufficientCredits(
            f"Insufficient credits: this needs {amount}, the balance is {have}",
            needed=amount,
            balance=have,
        )
    rid = uuid.uuid4().hex
    now = utcnow()
    session.add(
        CreditReservation(
            id=rid,
            user_id=user_id,
            amount=amount,
            captured=0,
            purpose=purpose,
            created_at=now,
            heartbeat_at=now,
            context=context,
        )
    )
    session.flush()
    _add_entry(session, user_id, -amount, "reserve", purpose, rid)
    return Reservation(rid, user_id, amount)


def capture(session: Session, reservation_id: str, amount: int, operation: str = "other") -> bool:
    """Mark ``amount`` more of a held reservation as used. Returns False (and changes nothing)
    if the reservation is already settled or the capture would exceed what was reserved.
    Once committed, ``amount`` counts in ``pixelmill_credits_charged_total{operation}``."""
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
    if result is None:
        return False
    run_after_commit(session, partial(CREDITS_CHARGED.labels(operation).inc, amount))
    return True


def release(session: Session, reservation_id: str) -> int:
    """Settle a reservation: give back what was not captured. Runs its effect exactly once;
    a second call returns 0 and changes nothing. Returns the credits given back."""
    settled = _settle_held(session, reservation_id)
    return 0 if settled is None else settled.refund


def _settle_held(
    session: Session, reservation_id: str, *conditions: ColumnElement[bool]
) -> Settlement | None:
    """The one settling move: ``held -> settled`` when ``conditions`` also hold, then the
    refund of what was not captured. None when this call did not settle it."""
    row = session.execute(
        update(CreditReservation)
        .where(
            CreditReservation.id == reservation_id, CreditReservation.status == "held", *conditions
        )
        .values(status="settled", settled_at=utcnow())
        .returning(
            CreditReservation.user_id,
            CreditReservation.amount,
            CreditReservation.captured,
            CreditReservation.purpose,
            CreditReservation.context,
        )
    ).first()
    if row is None:
        return None
    user_id, amount, captured = int(row[0]), int(row[1]), int(row[2])
    refund = amount - captured
    if refund > 0:
        _move(session, user_id, refund)
        _add_entry(session, user_id, refund, "release", "unused credits returned", reservation_id)
        run_after_commit(session, partial(CREDITS_REFUNDED.inc, refund))
    return Settlement(reservation_id, user_id, str(row[3]), row[4], refund)


def renew(session: Session, reservation_id: str) -> bool:
    """Record that the holder of a reservation is still alive (its heartbeat); False when the
    reservation is no longer held."""
    result = session.execute(
        update(CreditReservation)
        .where(CreditReservation.id == reservation_id, CreditReservation.status == "held")
        .values(heartbeat_at=utcnow())
        .returning(CreditReservation.id)
    ).first()
    return result is not None


def settle(session: Session, reservation_id: str, used: int, operation: str = "other") -> int:
    """Capture ``used`` credits and release the rest. Returns the credits actually kept."""
    captured_ok = capture(session, reservation_id, used, operation)
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


CREDIT_TOTALS = select(
    User.credits,
    select(func.coalesce(func.sum(CreditLedgerEntry.delta), 0))
    .where(CreditLedgerEntry.user_id == bindparam("user_id"), CreditLedgerEntry.kind == "purchase")
    .scalar_subquery(),
    User.plan,
).where(User.id == bindparam("user_id"))
"""One account's balance, the total it ever purchased and its plan, in one statement
(parameter ``user_id``)."""


@dataclass(frozen=True)
class CreditTotals:
    credits: int
    total_purchased: int
    plan: str

    @classmethod
    def of(cls, row: Sequence[Any] | None) -> CreditTotals:
        """From a :data:`CREDIT_TOTALS` row."""
        if row is None:
            raise NotFound("User not found")
        return cls(int(row[0]), int(row[1] or 0), str(row[2]))


def credit_totals(session: Session, user_id: int) -> CreditTotals:
    """The balance, the total ever purchased and the plan, read together now."""
    return CreditTotals.of(session.execute(CREDIT_TOTALS, {"user_id": user_id}).first())


def total_purchased(session: Session, user_id: int) -> int:
    return int(
        session.scalar(
            select(func.coalesce(func.sum(CreditLedgerEntry.delta), 0)).where(
                CreditLedgerEntry.user_id == user_id, CreditLedgerEntry.kind == "purchase"
            )
        )
        or 0
    )


def release_stale(
    session: Session, silent_since: datetime, purpose_prefix: str = "sync:"
) -> list[Settlement]:
    """Release held reservations whose holder has given no sign of life (heartbeat, or
    creation when it never sent one) since ``silent_since``: synchronous work whose process
    died mid-request. Jobs have their own sweeper. The staleness is re-checked in the settling
    UPDATE itself, so a heartbeat or a settlement that lands in between wins. Returns what this
    call released (each reservation once, whoever else sweeps at the same time)."""
    last_sign = func.coalesce(CreditReservation.heartbeat_at, CreditReservation.created_at)
    ids = session.scalars(
        select(CreditReservation.id).where(
            CreditReservation.status == "held",
            last_sign < silent_since,
            CreditReservation.purpose.startswith(purpose_prefix),
        )
    ).all()
    released = []
    for rid in ids:
        settled = _settle_held(session, rid, last_sign < silent_since)
        if settled is not None:
            released.append(settled)
    return released
