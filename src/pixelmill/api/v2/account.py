"""``GET /api/v2/account``: validates the key; the owning account and its balance."""

from __future__ import annotations

from fastapi import APIRouter, Response

from pixelmill.accounts.plans import get_plan
from pixelmill.accounts.schemas import Account, Me, RateLimits
from pixelmill.api.deps import ApiKeyUser, Res
from pixelmill.credits import ledger

router = APIRouter(prefix="/api/v2", tags=["v2 account"])


@router.get("/account", response_model=Account)
async def account(user: ApiKeyUser, resources: Res) -> Response:
    """The account that owns the API key, its credit balance and its plan limits.

    Answered as JSON already serialised from :class:`Account`: returning the model would have
    FastAPI validate it a second time against ``response_model`` on every call (this is the
    benchmarked authenticated path, ``bench/bench_account.py``)."""
    row = await resources.db.fetch_row(ledger.CREDIT_TOTALS, {"user_id": user.id})
    totals = ledger.CreditTotals.of(row)  # read now: the authenticated user may be cached
    plan = get_plan(totals.plan)
    me = Me.of(user, totals.credits).model_dump() | {"subscription_tier": totals.plan}
    body = Account(
        **me,
        total_purchased=totals.total_purchased,
        rate_limits=RateLimits(
            requests_per_minute=plan.requests_per_minute
            or resources.settings.enterprise_requests_per_minute,
            requests_per_day=plan.requests_per_day,
            max_file_size_mb=plan.max_file_bytes // (1024 * 1024),
        ),
    )
    return Response(body.model_dump_json(), media_type="application/json")
