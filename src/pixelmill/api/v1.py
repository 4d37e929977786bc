"""The v1 multipart surface (API key): user and credits here; image operations are added by the
operations pipeline."""

from __future__ import annotations

from fastapi import APIRouter

from pixelmill.accounts.schemas import CreditBalance, UserInfo
from pixelmill.api.deps import ApiKeyUser, DbSession
from pixelmill.credits import ledger

router = APIRouter(prefix="/api/v1", tags=["v1"])


@router.get("/user", response_model=UserInfo)
def user_info(user: ApiKeyUser) -> UserInfo:
    """The account that owns the API key, with its credits."""
    return UserInfo(id=user.id, email=user.email, credits=user.credits, is_active=user.is_active)


@router.get("/credits", response_model=CreditBalance)
def credits(user: ApiKeyUser, session: DbSession) -> CreditBalance:
    """The account's credit balance."""
    return CreditBalance(
        credits=user.credits, total_purchased=ledger.total_purchased(session, user.id)
    )
