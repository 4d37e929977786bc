"""Products of the v2 library: a saved product image, reusable by scene jobs."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from pixelmill.db.base import Base, UTCDateTime, utcnow


class Product(Base):
    __tablename__ = "products"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    # The JWT catalog's integer id (drawn at creation; lazily for older rows).
    number: Mapped[int | None] = mapped_column(Integer, nullable=True, unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(255))
    filename: Mapped[str] = mapped_column(String(255))
    category: Mapped[str] = mapped_column(String(64), index=True)
    description: Mapped[str] = mapped_column(Text, default="")
    image_key: Mapped[str] = mapped_column(String(255))
    brand: Mapped[str | None] = mapped_column(String(255), nullable=True, index=True)
    # active (shown in the catalog's default views), draft or archived
    status: Mapped[str] = mapped_column(String(16), default="active", server_default="active")
    collection_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    width: Mapped[int] = mapped_column(Integer)
    height: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Soft delete: gone from lists and gets, kept for the jobs that used it.
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
