"""History of synchronous operations (``GET /api/v1/history``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from pixelmill.db.base import Base, UTCDateTime, utcnow


class ProcessingRecord(Base):
    __tablename__ = "processing_records"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    operation: Mapped[str] = mapped_column(String(64))
    surface: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16))
    credits_used: Mapped[int] = mapped_column(Integer, default=0)
    processing_time: Mapped[float] = mapped_column(Float, default=0.0)
    input_width: Mapped[int | None] = mapped_column(Integer, nullable=True)
    input_height: Mapped[int | None] = mapped_column(Integer, nullable=True)
    result_key: Mapped[str | None] = mapped_column(String(255), nullable=True)
    result_format: Mapped[str | None] = mapped_column(String(8), nullable=True)
    error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
