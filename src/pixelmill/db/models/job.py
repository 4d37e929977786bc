"""Jobs (v2): one unit of asynchronous work. The row is the truth; queues carry only its id."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String, Text, false
from sqlalchemy.orm import Mapped, mapped_column

from pixelmill.db.base import Base, UTCDateTime, utcnow


class Job(Base):
    __tablename__ = "jobs"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    # The integer id of the surfaces that show one (video and ad-pack jobs...); None elsewhere.
    number: Mapped[int | None] = mapped_column(Integer, nullable=True, unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(32), default="scenes")
    # pending -> queued -> processing -> completed | failed (pixelmill.jobs.lifecycle)
    status: Mapped[str] = mapped_column(String(16), default="pending", index=True)
    batch_id: Mapped[str | None] = mapped_column(
        ForeignKey("batches.id", ondelete="CASCADE"), nullable=True, index=True
    )
    item_ref: Mapped[str | None] = mapped_column(String(255), nullable=True)
    product_id: Mapped[str | None] = mapped_column(
        ForeignKey("products.id", ondelete="SET NULL"), nullable=True
    )
    input_key: Mapped[str] = mapped_column(String(255))
    category: Mapped[str] = mapped_column(String(64), default="other")
    images_to_generate: Mapped[int] = mapped_column(Integer)
    # The engine parameters of kinds other than scenes (e.g. an avatar's prompt), JSON.
    params: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    seed: Mapped[int] = mapped_column(Integer, default=0)
    credits_reserved: Mapped[int] = mapped_column(Integer, default=0)
    credits_used: Mapped[int] = mapped_column(Integer, default=0)
    # Made with a test key: nothing reserved nor captured, its images watermarked.
    test: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # A batch item draws on its batch's reservation; a single job has its own (a test job none).
    reservation_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    webhook_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    base_url: Mapped[str] = mapped_column(Text, default="")
    progress_completed: Mapped[int] = mapped_column(Integer, default=0)
    progress_failed: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Incremented by every claim: the fencing token of the current run.
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
