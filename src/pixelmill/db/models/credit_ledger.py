"""The credit ledger and credit reservations.

``users.credits == sum(credit_ledger.delta)`` for every user, at all times: both are written only
by ``pixelmill.credits.ledger`` in one transaction. A reservation holds credits for work in
flight; it is settled exactly once (captured part kept, the rest released).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, CheckConstraint, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from pixelmill.db.base import Base, UTCDateTime, utcnow


class CreditReservation(Base):
    __tablename__ = "credit_reservations"
    __table_args__ = (
        CheckConstraint("amount > 0", name="amount_positive"),
        CheckConstraint("captured >= 0 AND captured <= amount", name="captured_in_range"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    amount: Mapped[int] = mapped_column(Integer)
    captured: Mapped[int] = mapped_column(Integer, default=0)
    # held -> settled (exactly once)
    status: Mapped[str] = mapped_column(String(16), default="held", index=True)
    purpose: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    settled_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # Synchronous runs renew this while they are alive; a held reservation whose heartbeat (or,
    # when NULL, created_at) is older than the timeout belongs to a run that died.
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # What the sweeper needs to record a dead run's history row (processing id, surface, size).
    context: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class CreditLedgerEntry(Base):
    __tablename__ = "credit_ledger"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    delta: Mapped[int] = mapped_column(Integer)
    # grant | purchase | signup | reserve | release | purchase_refund (a paid pack refunded)
    # | owed_collected (credits a refund could not take back, taken from a later purchase)
    kind: Mapped[str] = mapped_column(String(16))
    reservation_id: Mapped[str | None] = mapped_column(
        ForeignKey("credit_reservations.id"), nullable=True, index=True
    )
    memo: Mapped[str] = mapped_column(String(255), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
