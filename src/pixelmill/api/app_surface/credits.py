"""``/api/credits``: balance (JWT) and the public price list."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from pixelmill.accounts.plans import CREDIT_PACKS, PLANS
from pixelmill.accounts.schemas import CreditBalance
from pixelmill.api.deps import JwtUser, ReadSession, Res
from pixelmill.credits import ledger
from pixelmill.credits.pricing import OPERATION_PRICES

router = APIRouter(prefix="/api/credits", tags=["credits"])


@router.get("/balance", response_model=CreditBalance)
def balance(user: JwtUser, session: ReadSession) -> CreditBalance:
    """The account's credits and the total it ever purchased."""
    return CreditBalance(
        credits=user.credits, total_purchased=ledger.total_purchased(session, user.id)
    )


@router.get("/pricing")
def pricing(resources: Res) -> dict[str, Any]:
    """Plans (request rates, file-size caps), credit packs and what each operation costs."""
    enterprise_rpm = resources.settings.enterprise_requests_per_minute
    return {
        "plans": [
            {
                "id": p.id,
                "name": p.name,
                "requests_per_minute": p.requests_per_minute or enterprise_rpm,
                "requests_per_day": p.requests_per_day,
                "max_file_size_mb": p.max_file_bytes // (1024 * 1024),
                "price_usd_month": p.price_usd_month,
            }
            for p in PLANS.values()
        ],
        "credit_packs": [
            {"id": c.id, "credits": c.credits, "price_usd": c.price_usd} for c in CREDIT_PACKS
        ],
        "operations": {**OPERATION_PRICES, "upscale_2x": 1, "upscale_4x": 1, "upscale_8x": 2},
        "credits_expire": False,
    }
