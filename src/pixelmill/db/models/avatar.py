"""Avatars: people for product photos and try-on. One table for the v2 library (UUID) and,
later, the avatar studio's saved avatars. Images live in the library store."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from pixelmill.db.base import Base, UTCDateTime, utcnow


class Avatar(Base):
    __tablename__ = "avatars"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    # The avatar studio's integer id (JWT surface); drawn on first need.
    number: Mapped[int | None] = mapped_column(Integer, nullable=True, unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(255))
    gender: Mapped[str] = mapped_column(String(32), default="unspecified")
    image_key: Mapped[str] = mapped_column(String(255))
    # guided (drawn from a prompt) or reference (from a person photo)
    kind: Mapped[str] = mapped_column(String(16), default="guided")
    prompt: Mapped[str | None] = mapped_column(Text, nullable=True)
    style: Mapped[str | None] = mapped_column(String(64), nullable=True)
    characteristics: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # Body landmarks of the image (output pixel coordinates), for placement and try-on.
    landmarks: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    parent_id: Mapped[str | None] = mapped_column(
        ForeignKey("avatars.id", ondelete="SET NULL"), nullable=True
    )
    # The generation job that made it (None for uploads).
    job_id: Mapped[str | None] = mapped_column(String(40), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
