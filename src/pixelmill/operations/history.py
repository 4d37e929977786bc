"""The history of synchronous runs (``processing_records``), as ``GET /api/v1/history`` reads
it. Rows are written by :mod:`pixelmill.operations.accounting`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from pixelmill.db.models import ProcessingRecord


@dataclass(frozen=True)
class HistoryPage:
    rows: Sequence[ProcessingRecord]
    total: int


def list_history(session: Session, user_id: int, *, limit: int, offset: int) -> HistoryPage:
    """One page of ``user_id``'s runs, newest first, and how many there are in all."""
    rows = session.scalars(
        select(ProcessingRecord)
        .where(ProcessingRecord.user_id == user_id)
        .order_by(ProcessingRecord.created_at.desc(), ProcessingRecord.id)
        .limit(limit)
        .offset(offset)
    ).all()
    total = session.scalar(
        select(func.count())
        .select_from(ProcessingRecord)
        .where(ProcessingRecord.user_id == user_id)
    )
    return HistoryPage(rows, int(total or 0))
