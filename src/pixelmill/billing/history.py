"""The account's history: every change to its balance, with what it paid for, newest first,
paged (``GET /api/v1/history``, ``GET /api/v2/account/history``, the dashboard's History).

One entry per piece of work or per ledger entry that is not work:

* ``sync``: a synchronous call (its ``processing_records`` row: v1, v2, the app surface, the
  avatar studio's samples, quick videos), charged what it captured (a failed call: 0);
* ``job`` / ``batch``: a job of any kind or a batch, charged what its reservation took less
  what it gave back (``credits_refunded``: the outputs that failed or were cancelled);
* ``grant``, ``signup``, ``purchase``, ``purchase_refund``, ``owed_collected``: ledger entries
  without a reservation (an operator's grant, the sign-up credits, a pack bought, a payment
  refunded, what a refund left owed taken from a later purchase).

``credits`` is the entry's signed change to the balance, so the entries add up to the ledger
(a synchronous call still running, whose history row is written when it ends, excepted); the
work entries are the usage report's spends (``billing/usage.py``), the others its
``other_entries``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import CompoundSelect, String, case, cast, func, literal, select, union_all
from sqlalchemy.orm import Session

from pixelmill.billing.schemas import History, HistoryItem
from pixelmill.db.base import utcnow
from pixelmill.db.models import CreditLedgerEntry, CreditReservation, ProcessingRecord
from pixelmill.jobs import service as jobs
from pixelmill.jobs.service import WorkSummary
from pixelmill.operations.accounting import SYNC_PURPOSE_PREFIX
from pixelmill.storage import UrlSigner

ResultLink = Callable[[ProcessingRecord], str | None]
"""The signed URL of a synchronous call's result while it is kept, else None."""


def kept_results(signer: UrlSigner, base_url: str, ttl_hours: float) -> ResultLink:
    """Links to the results still kept (``PIXELMILL_RESULT_TTL_HOURS``), from ``base_url``."""
    base = base_url.rstrip("/")
    kept_since = utcnow() - timedelta(hours=ttl_hours)

    def link(r: ProcessingRecord) -> str | None:
        if r.result_key is None or r.created_at <= kept_since:
            return None
        return base + signer.path_for(r.result_key)

    return link


@dataclass(frozen=True)
class _Row:
    source: str  # sync | work | ledger
    ref: str
    at: datetime
    credits: int
    refunded: int


def _sources(user_id: int) -> CompoundSelect[Any]:
    """Every entry of the account: its calls, its jobs' and batches' reservations, and its
    ledger entries that are not work."""
    record, held, entry = ProcessingRecord, CreditReservation, CreditLedgerEntry
    sync = select(
        literal("sync").label("source"),
        record.id.label("ref"),
        record.created_at.label("at"),
        (-record.credits_used).label("credits"),
        literal(0).label("refunded"),
    ).where(record.user_id == user_id)
    work = (
        select(
            literal("work"),
            held.id,
            held.created_at,
            func.sum(entry.delta),
            func.sum(case((entry.delta > 0, entry.delta), else_=0)),
        )
        .join(entry, entry.reservation_id == held.id)
        .where(held.user_id == user_id, ~held.purpose.startswith(SYNC_PURPOSE_PREFIX))
        .group_by(held.id, held.created_at)
    )
    other = select(
        literal("ledger"),
        cast(entry.id, String),
        entry.created_at,
        entry.delta,
        literal(0),
    ).where(entry.user_id == user_id, entry.reservation_id.is_(None))
    return union_all(sync, work, other)


def _page(session: Session, user_id: int, limit: int, offset: int) -> tuple[list[_Row], int]:
    every = _sources(user_id).subquery()
    rows = session.execute(
        select(every).order_by(every.c.at.desc(), every.c.ref.desc()).limit(limit).offset(offset)
    ).all()
    total = session.scalar(select(func.count()).select_from(every))
    page = [
        _Row(str(r.source), str(r.ref), r.at, int(r.credits), int(r.refunded or 0)) for r in rows
    ]
    return page, int(total or 0)


def history(
    session: Session, user_id: int, *, limit: int, offset: int, link: ResultLink
) -> History:
    """One page of ``user_id``'s history, newest first, and how many entries there are."""
    page, total = _page(session, user_id, limit, offset)
    by_source: dict[str, list[str]] = {"sync": [], "work": [], "ledger": []}
    for row in page:
        by_source[row.source].append(row.ref)
    records = {
        r.id: r
        for r in session.scalars(
            select(ProcessingRecord).where(ProcessingRecord.id.in_(by_source["sync"]))
        )
    }
    purposes = dict(
        session.execute(
            select(CreditReservation.id, CreditReservation.purpose).where(
                CreditReservation.id.in_(by_source["work"])
            )
        ).all()
    )
    entries = {
        str(e.id): e
        for e in session.scalars(
            select(CreditLedgerEntry).where(
                CreditLedgerEntry.id.in_([int(i) for i in by_source["ledger"]])
            )
        )
    }
    ids: dict[str, list[str]] = {"job": [], "batch": []}
    for purpose in purposes.values():
        prefix, _, ref = purpose.partition(":")
        ids.setdefault(prefix, []).append(ref)
    work = jobs.work_summaries(session, ids["job"], ids["batch"])
    items = []
    for row in page:
        if row.source == "sync":
            items.append(_sync_item(row, records[row.ref], link))
        elif row.source == "work":
            items.append(_work_item(row, purposes[row.ref], work))
        else:
            items.append(_ledger_item(row, entries[row.ref]))
    return History(items=items, total=total, limit=limit, offset=offset)


def _sync_item(row: _Row, r: ProcessingRecord, link: ResultLink) -> HistoryItem:
    return HistoryItem(
        processing_id=r.id,
        kind="sync",
        operation=r.operation,
        surface=r.surface,
        status=r.status,
        credits_used=r.credits_used,
        credits=row.credits,
        credits_refunded=0,
        processing_time=r.processing_time,
        original_size=[r.input_width or None, r.input_height or None],  # none: no input
        result_format=r.result_format,
        result_url=link(r),
        error=r.error,
        description=f"{r.operation.replace('_', ' ')} ({r.surface})",
        created_at=r.created_at.isoformat(),
    )


def _work_item(row: _Row, purpose: str, found: dict[str, WorkSummary]) -> HistoryItem:
    prefix, _, ref = purpose.partition(":")
    summary = found.get(ref)
    kind = "batch" if prefix == "batch" else "job" if prefix == "job" else prefix
    operation = summary.kind if summary else f"{kind} (deleted)"
    outputs = f"{summary.outputs} output{'s' * (summary.outputs != 1)}" if summary else ""
    return HistoryItem(
        processing_id=ref,
        kind=kind,
        operation=operation,
        surface="batches" if kind == "batch" else "jobs",
        status=summary.status if summary else "deleted",
        credits_used=max(0, -row.credits),
        credits=row.credits,
        credits_refunded=row.refunded,
        processing_time=(summary.seconds or 0.0) if summary else 0.0,
        original_size=[None, None],
        result_format=None,
        result_url=None,
        error=summary.error if summary else None,
        description=" ".join(
            p
            for p in (operation.replace("_", " "), kind if kind != operation else "", outputs)
            if p
        ),
        created_at=row.at.isoformat(),
    )


LEDGER_WORDS = {
    "grant": "credits granted",
    "signup": "sign-up credits",
    "purchase": "credits bought",
    "purchase_refund": "credits taken back (payment refunded)",
    "owed_collected": "owed credits collected (payment refunded earlier)",
}


def _ledger_item(row: _Row, e: CreditLedgerEntry) -> HistoryItem:
    words = LEDGER_WORDS.get(e.kind, e.kind)
    return HistoryItem(
        processing_id=f"ledger-{e.id}",
        kind=e.kind,
        operation=e.kind,
        surface="account",
        status="completed",
        credits_used=0,
        credits=row.credits,
        credits_refunded=0,
        processing_time=0.0,
        original_size=[None, None],
        result_format=None,
        result_url=None,
        error=None,
        description=f"{words}: {e.memo}" if e.memo and e.memo != words else words,
        created_at=row.at.isoformat(),
    )
