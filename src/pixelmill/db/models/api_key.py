"""API keys, stored only as a keyed hash (HMAC-SHA256 with the server secret). A live key
(``pk_live_``) spends the account's credits; a test key (``pk_test_``, at most one unrevoked per
account) runs the same work for free, its images watermarked (docs/accounts.md)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Integer, String, false
from sqlalchemy.orm import Mapped, mapped_column

from pixelmill.db.base import Base, UTCDateTime, utcnow


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # The first characters, for display ("pk_live_AbC…"); never enough to use the key.
    prefix: Mapped[str] = mapped_column(String(16))
    # A test key: never charged, its images watermarked, its own rate limit.
    test: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
