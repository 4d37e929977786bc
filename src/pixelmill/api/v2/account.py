"""``GET /api/v2/account``: validates the key; the owning account and its balance."""

from __future__ import annotations

from fastapi import APIRouter

from pixelmill.accounts.plans import get_plan
from pixelmill.accounts.schemas import Account, Me, RateLimits
from pixelmill.api.deps import ApiKeyUser, ReadSession, Res
from pixelmill.credits import ledger

router = APIRouter(prefix="/api/v2", tags=["v2 account"])


@router.get("/account", response_model=Account)
def account(user: ApiKeyUser, session: ReadSession, resources: Res) -> Account:
    """The account that owns the API key, its credit balance and its plan limits."""
    plan = get_plan(user.plan)
    return Account(
        **Me.of(user).model_dump(),
        total_purchased=ledger.total_purchased(session, user.id),
        rate_limits=RateLimits(
            requests_per_minute=plan.requests_per_minute
            or resources.settings.enterprise_requests_per_minute,
            requests_per_day=plan.requests_per_day,
            max_file_size_mb=plan.max_file_bytes // (1024 * 1024),
        ),
    )
