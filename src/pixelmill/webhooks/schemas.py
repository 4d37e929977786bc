"""Request and response models of the webhook endpoints (``/api/v2/webhooks``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from pixelmill.schemas import Schema, Timestamp


class WebhookCreate(BaseModel):
    url: str = Field(min_length=1, max_length=2000, description="http(s) URL to POST events to")
    secret: str | None = Field(
        None,
        min_length=8,
        max_length=255,
        description="signing secret (whsec_<base64> or any string); generated when absent",
    )


class WebhookOut(Schema):
    id: int
    url: str
    created_at: Timestamp
    secret: str | None = Field(None, description="shown only in the create response")


class WebhookDeleted(BaseModel):
    id: int
    deleted: bool = True


class AttemptOut(Schema):
    number: int
    status_code: int | None = Field(description="the receiver's HTTP status; null: no answer")
    duration_ms: int
    error: str | None
    response_body: str = Field(description="the start of the receiver's answer")
    created_at: Timestamp


class DeliveryOut(Schema):
    """One webhook message and its attempts (the body is the JSON that was signed)."""

    id: str = Field(description="the webhook-id header of every attempt")
    event: str
    url: str
    status: str = Field(description="pending (retries to come), delivered or failed")
    attempts: int
    next_attempt_at: Timestamp | None
    created_at: Timestamp
    delivered_at: Timestamp | None
    payload: dict[str, Any]
    attempt_log: list[AttemptOut]


class DeliveryList(BaseModel):
    deliveries: list[DeliveryOut]
    limit: int
    offset: int


class SigningSecret(BaseModel):
    secret: str = Field(
        description="signs deliveries to a request's own webhook_url while the account has no "
        "registered webhook (registered webhooks sign with their own secret)"
    )
