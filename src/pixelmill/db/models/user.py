"""Accounts."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, CheckConstraint, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from pixelmill.db.base import Base, UTCDateTime, utcnow


class User(Base):
    __tablename__ = "users"
    __table_args__ = (CheckConstraint("credits >= 0", name="credits_not_negative"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(320), unique=True, index=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    is_active: Mapped[bool] = mapped_column(Boolean, default=True)
    plan: Mapped[str] = mapped_column(String(32), default="free")
    # Signs webhook deliveries to a per-request webhook_url when the account registered no
    # endpoint (created on first need; GET /api/v2/webhooks/signing-secret shows it).
    webhook_secret: Mapped[str | None] = mapped_column(String(255), nullable=True)
    # The balance. Written only by pixelmill.credits.ledger, always together with a ledger row.
    credits: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    # Not a column: True on the row authentication returns for a *test* key
    # (accounts/service.py::user_for_api_key). Work done for such a caller is never charged and
    # its images are watermarked; a row read any other way says False.
    via_test_key = False
