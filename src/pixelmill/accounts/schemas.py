"""Request and response shapes of the account endpoints."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, EmailStr, Field

from pixelmill.db.models import User


class UserCreate(BaseModel):
    email: EmailStr
    password: str = Field(min_length=6, max_length=256)


class UserInfo(BaseModel):
    """The v1 user record."""

    id: int
    email: str
    credits: int
    is_active: bool


class Me(UserInfo):
    subscription_tier: str
    created_at: datetime

    @classmethod
    def of(cls, user: User, credits: int | None = None) -> Me:
        """``credits``: the balance read now (an authenticated ``user`` may come from the
        credential cache, whose balance is not to be shown)."""
        return cls(
            id=user.id,
            email=user.email,
            credits=user.credits if credits is None else credits,
            is_active=user.is_active,
            subscription_tier=user.plan,
            created_at=user.created_at,
        )


class Registered(Me):
    api_key: str = Field(description="shown once; store it now")
    message: str


class Token(BaseModel):
    access_token: str
    token_type: str = "bearer"  # noqa: S105  (the OAuth2 token type, not a secret)
    expires_in: int = Field(description="seconds")


class RegeneratedKey(BaseModel):
    token: str = Field(description="the new API key; every earlier key stopped working")
    api_key: str
    message: str


class TestKeyCreated(BaseModel):
    token: str = Field(
        description="the new test key (pk_test_...), shown once; the account's earlier test key "
        "stopped working"
    )
    api_key: str = Field(
        description="the same key under the name register and regenerate-token use for keys"
    )


class RateLimits(BaseModel):
    requests_per_minute: int
    requests_per_day: int | None
    max_file_size_mb: int


class Account(Me):
    """``GET /api/v2/account``: the owning account, its balance and plan limits."""

    total_purchased: int
    rate_limits: RateLimits


class CreditBalance(BaseModel):
    credits: int
    total_purchased: int
