"""Storefront enrichment jobs: the storefront's view of a product-enrichment run. A job the
server runs (``run_by = "server"``) is linked to its ``jobs`` row, which holds the status, the
reservation and the delivered files; a job an app runs itself (``run_by = "app"``) has no
``jobs`` row and is moved by the app's PATCHes. ``id`` is the integer id the surface shows
(drawn from ``public_numbers``, the same number as the linked job's ``jobs.number``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from pixelmill.db.base import Base, UTCDateTime, utcnow


class EnrichmentJob(Base):
    __tablename__ = "enrichment_jobs"
    __table_args__ = (Index("ix_enrichment_jobs_owner", "user_id", "shop_domain", "created_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    job_id: Mapped[str | None] = mapped_column(
        ForeignKey("jobs.id", ondelete="SET NULL"), nullable=True, unique=True
    )
    shop_domain: Mapped[str] = mapped_column(String(255))
    run_by: Mapped[str] = mapped_column(String(8), default="server")
    # The status of an app-run job (a server-run job's is its jobs row's).
    status: Mapped[str] = mapped_column(String(16), default="pending")
    enrichments: Mapped[list[str]] = mapped_column(JSON)
    image_operations: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    # Per product, in request order: its id, title, what is pending, what was delivered
    # (text values, stored image keys), errors (pixelmill.storefront.enrichment).
    products: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    products_total: Mapped[int] = mapped_column(Integer, default=0)
    products_completed: Mapped[int] = mapped_column(Integer, default=0)
    products_failed: Mapped[int] = mapped_column(Integer, default=0)
    credits_reserved: Mapped[int] = mapped_column(Integer, default=0)
    credits_used: Mapped[int] = mapped_column(Integer, default=0)
    # What an app reported with PATCH (kept verbatim); the server's own results are ``products``.
    results_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    error_message: Mapped[str | None] = mapped_column(Text, nullable=True)
    webhook_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    activity_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Set once when the terminal job was settled (activity logged, webhook emitted).
    settled_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
