"""Batches (v2): many product images, each run as one job drawing on the batch's reservation."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text, false
from sqlalchemy.orm import Mapped, mapped_column

from pixelmill.db.base import Base, UTCDateTime, utcnow


class Batch(Base):
    __tablename__ = "batches"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    # pending -> processing -> completed (a cancelled batch is completed with cancelled=True)
    status: Mapped[str] = mapped_column(String(16), default="pending", index=True)
    cancelled: Mapped[bool] = mapped_column(Boolean, default=False)
    images_per_product: Mapped[int] = mapped_column(Integer)
    total_images: Mapped[int] = mapped_column(Integer)
    credits_reserved: Mapped[int] = mapped_column(Integer)
    credits_used: Mapped[int] = mapped_column(Integer, default=0)
    # None for a test batch (made with a test key: nothing reserved, its images watermarked).
    reservation_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    test: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    webhook_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    base_url: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
