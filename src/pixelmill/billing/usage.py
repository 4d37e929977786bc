"""The usage report: credits spent on work in a period, by day or by operation, for one account
(``GET /api/v2/usage``) or every account (``pixelmill admin usage``), as JSON rows or CSV.
Spends come from the ledger (``credits.usage``); a job's operation is its kind, a batch's is
``batch``, a synchronous call's its operation."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal

from sqlalchemy.orm import Session

from pixelmill.credits.usage import Spend, other_entries, spends
from pixelmill.jobs import service as jobs

GroupBy = Literal["day", "operation"]


@dataclass(frozen=True)
class UsageReport:
    start: date
    end: date
    group_by: GroupBy
    rows: list[tuple[str, int]]
    """(group key, credits), in key order."""
    other_entries: int
    """Grants, purchases and sign-up credits in the period (not usage)."""

    @property
    def total_credits(self) -> int:
        return sum(credits for _, credits in self.rows)

    def as_json(self) -> dict[str, object]:
        return {
            "from": self.start.isoformat(),
            "to": self.end.isoformat(),
            "group_by": self.group_by,
            "total_credits": self.total_credits,
            "rows": [{self.group_by: key, "credits": credits} for key, credits in self.rows],
        }

    def as_csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([self.group_by, "credits"])
        writer.writerows(self.rows)
        return out.getvalue()


def _operations(session: Session, found: list[Spend]) -> dict[str, str]:
    ids = {s.purpose.removeprefix("job:") for s in found if s.purpose.startswith("job:")}
    return jobs.job_kinds(session, ids)


def operation_of(purpose: str, kinds: dict[str, str]) -> str:
    if purpose.startswith("sync:"):
        return purpose.removeprefix("sync:")
    if purpose.startswith("job:"):
        return kinds.get(purpose.removeprefix("job:"), "job (deleted)")
    return purpose.split(":", 1)[0]


def usage_report(
    session: Session, start: date, end: date, group_by: GroupBy, user_id: int | None = None
) -> UsageReport:
    """Credits spent from ``start`` to ``end`` (both days included, UTC)."""
    since = datetime.combine(start, time.min, tzinfo=UTC)
    until = datetime.combine(end + timedelta(days=1), time.min, tzinfo=UTC)
    found = spends(session, since, until, user_id)
    kinds = _operations(session, found) if group_by == "operation" else {}
    totals: dict[str, int] = defaultdict(int)
    for spend in found:
        key = spend.day.isoformat() if group_by == "day" else operation_of(spend.purpose, kinds)
        totals[key] += spend.credits
    rows = sorted((k, v) for k, v in totals.items() if v)
    return UsageReport(start, end, group_by, rows, other_entries(session, since, until, user_id))
