"""Storefront activity log: one row per enrichment operation a storefront app (or the server's
own enrichment job) reports, with the per-product change details."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from pixelmill.db.base import Base, UTCDateTime, utcnow


class StorefrontActivity(Base):
    __tablename__ = "storefront_activities"
    __table_args__ = (
        Index("ix_storefront_activities_owner", "user_id", "shop_domain", "created_at"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    shop_domain: Mapped[str] = mapped_column(String(255))
    # enrichment | description | images | tags
    activity_type: Mapped[str] = mapped_column(String(16))
    # pending | processing | completed | failed
    status: Mapped[str] = mapped_column(String(16))
    # [{id, title, changes: [{field, before, after}]}]
    products: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    products_count: Mapped[int] = mapped_column(Integer, default=0)
    # Whether it touched images (an ``images`` activity, or an image change): the summary's
    # image jobs.
    has_images: Mapped[bool] = mapped_column(Boolean, default=False)
    credits_used: Mapped[int] = mapped_column(Integer, default=0)
    error_message: Mapped[str | None] = mapped_column(Text, nullable=True)
    # The enrichment job it reports, when there is one (its integer id).
    job_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
