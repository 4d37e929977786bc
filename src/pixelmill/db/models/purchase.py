"""Credit packs bought through Stripe Checkout (``billing/purchases.py``), and the Stripe events
already handled (each event id once, whatever the number of deliveries)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from pixelmill.db.base import Base, UTCDateTime, utcnow


class Purchase(Base):
    __tablename__ = "purchases"
    __table_args__ = (
        CheckConstraint("credits > 0", name="credits_positive"),
        CheckConstraint("refunded_credits >= 0 AND owed_credits >= 0", name="refunds_positive"),
    )

    # Ours, sent to Stripe as the session's client_reference_id.
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    pack_id: Mapped[str] = mapped_column(String(32))
    # What was sold, fixed when the checkout starts (a later change of the packs does not
    # change what this purchase grants).
    credits: Mapped[int] = mapped_column(Integer)
    price_cents: Mapped[int] = mapped_column(Integer)
    currency: Mapped[str] = mapped_column(String(3))
    # pending (checkout started) -> paid (credits granted) -> refunded (in full);
    # pending -> failed (the Checkout Session could not be created)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    session_id: Mapped[str | None] = mapped_column(String(255), unique=True, nullable=True)
    payment_intent: Mapped[str | None] = mapped_column(String(255), index=True, nullable=True)
    # Refunds: the amount Stripe reports refunded so far, the credits taken back for it, and
    # those the balance could not cover when it arrived (owed).
    refunded_cents: Mapped[int] = mapped_column(Integer, default=0)
    refunded_credits: Mapped[int] = mapped_column(Integer, default=0)
    owed_credits: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    paid_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class StripeEvent(Base):
    """A Stripe event handled (its effect committed with this row)."""

    __tablename__ = "stripe_events"

    id: Mapped[str] = mapped_column(String(255), primary_key=True)
    type: Mapped[str] = mapped_column(String(64))
    purchase_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
