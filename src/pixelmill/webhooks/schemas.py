"""Request and response models of the webhook endpoints (``/api/v2/webhooks``)."""

from __future__ import annotations

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


class Deleted(BaseModel):
    id: int
    deleted: bool = True
