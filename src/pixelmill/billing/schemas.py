"""Request and response bodies of the billing surface (``/api/v2/billing``) and of the
account's history (``/api/v1/history``, ``/api/v2/account/history``)."""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, field_validator

from pixelmill.schemas import Schema


class PackOut(Schema):
    id: str
    credits: int
    price_cents: int = Field(description="in the currency's smallest unit")
    currency: str


class Packs(BaseModel):
    packs: list[PackOut]


def _absolute_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("must be an absolute http(s) URL")
    return value


class CheckoutRequest(BaseModel):
    pack_id: str = Field(min_length=1, max_length=32)
    success_url: str = Field(
        max_length=2048,
        description="where Stripe sends the buyer once paid ({CHECKOUT_SESSION_ID} is "
        "replaced by Stripe)",
    )
    cancel_url: str = Field(max_length=2048, description="where the buyer goes on cancelling")

    _urls = field_validator("success_url", "cancel_url")(_absolute_url)


class CheckoutOut(BaseModel):
    checkout_url: str = Field(description="Stripe's hosted payment page: send the buyer there")
    session_id: str


class WebhookAck(BaseModel):
    received: Literal[True] = True
    outcome: str = Field(description="what this delivery did (docs/billing.md)")
