"""The plan table of the spec: request rates and file-size caps per subscription tier. (Credit
packs are ``PIXELMILL_CREDIT_PACKS``: ``credits.pricing.credit_packs``.)"""

from __future__ import annotations

from dataclasses import dataclass

MB = 1024 * 1024


@dataclass(frozen=True)
class Plan:
    id: str
    name: str
    requests_per_minute: int | None  # None: set by PIXELMILL_ENTERPRISE_REQUESTS_PER_MINUTE
    requests_per_day: int | None  # None: no daily cap
    max_file_bytes: int
    price_usd_month: float | None


PLANS: dict[str, Plan] = {
    p.id: p
    for p in (
        Plan("free", "Free", 10, 50, 5 * MB, 0.0),
        Plan("starter", "Starter", 60, 5_000, 10 * MB, None),
        Plan("pro", "Pro", 300, 50_000, 25 * MB, None),
        Plan("enterprise", "Enterprise", None, None, 100 * MB, None),
    )
}


def get_plan(plan_id: str) -> Plan:
    return PLANS.get(plan_id, PLANS["free"])
