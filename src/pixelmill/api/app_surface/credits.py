"""``/api/credits``: balance (JWT) and the public price list."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from pixelmill.accounts.plans import PLANS
from pixelmill.accounts.schemas import CreditBalance
from pixelmill.api.deps import JwtUser, ReadSession, Res
from pixelmill.config import CreditPack
from pixelmill.credits import ledger
from pixelmill.credits.pricing import credit_packs, published_prices

router = APIRouter(prefix="/api/credits", tags=["credits"])


class PlanPrice(BaseModel):
    id: str
    name: str
    requests_per_minute: int
    requests_per_day: int | None
    max_file_size_mb: int
    price_usd_month: float | None


class CreditPackPrice(BaseModel):
    """A pack on sale (``PIXELMILL_CREDIT_PACKS``, the same packs ``/api/v2/billing/packs``
    lists and Stripe Checkout sells)."""

    id: str
    credits: int
    price_usd: float | None = Field(
        description="the price in US dollars; null for a pack priced in another currency"
    )
    price_cents: int = Field(description="the price in the currency's smallest unit")
    currency: str = Field(description="ISO 4217 code, lower case")

    @classmethod
    def of(cls, pack: CreditPack) -> CreditPackPrice:
        usd = pack.price_cents / 100 if pack.currency == "usd" else None
        return cls(
            id=pack.id,
            credits=pack.credits,
            price_usd=usd,
            price_cents=pack.price_cents,
            currency=pack.currency,
        )


class PriceList(BaseModel):
    plans: list[PlanPrice]
    credit_packs: list[CreditPackPrice]
    operations: dict[str, int]
    credits_expire: bool


@router.get("/balance", response_model=CreditBalance)
def balance(user: JwtUser, session: ReadSession) -> CreditBalance:
    """The account's credits and the total it ever purchased."""
    totals = ledger.credit_totals(session, user.id)
    return CreditBalance(credits=totals.credits, total_purchased=totals.total_purchased)


@router.get("/pricing")
def pricing(resources: Res) -> PriceList:
    """Plans (request rates, file-size caps), credit packs and what each operation costs."""
    enterprise_rpm = resources.settings.enterprise_requests_per_minute
    return PriceList(
        plans=[
            PlanPrice(
                id=p.id,
                name=p.name,
                requests_per_minute=p.requests_per_minute or enterprise_rpm,
                requests_per_day=p.requests_per_day,
                max_file_size_mb=p.max_file_bytes // (1024 * 1024),
                price_usd_month=p.price_usd_month,
            )
            for p in PLANS.values()
        ],
        credit_packs=[CreditPackPrice.of(p) for p in credit_packs(resources.settings.credit_packs)],
        operations=published_prices(),
        credits_expire=False,
    )
