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


class HistoryItem(BaseModel):
    """One entry of the history. The fields up to ``created_at`` are those of the synchronous
    calls' history (the clients read them); the others say what every entry paid for."""

    processing_id: str = Field(
        description="the call's processing id, the job's or batch's id, or ledger-<n>"
    )
    operation: str = Field(description="the operation, the job's kind, batch, or the entry kind")
    surface: str
    status: str
    credits_used: int = Field(description="credits this work cost (0 for grants and purchases)")
    processing_time: float
    original_size: list[int | None]
    result_format: str | None
    result_url: str | None
    error: str | None
    created_at: str
    kind: str = Field(
        description="sync, job, batch, grant, signup, purchase, purchase_refund or owed_collected"
    )
    credits: int = Field(description="the signed change to the balance: the entries add up")
    credits_refunded: int = Field(
        description="of a job or batch: credits returned for outputs that failed or were "
        "cancelled (already subtracted from credits_used)"
    )
    description: str


class History(BaseModel):
    items: list[HistoryItem]
    total: int
    limit: int
    offset: int
