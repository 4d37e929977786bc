"""Webhook endpoints of the account (``/api/v2/webhooks``). Deliveries are signed with the
endpoint's secret (Standard Webhooks: ``webhook-id``, ``webhook-timestamp``,
``webhook-signature``)."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from pixelmill.api.deps import ApiKeyUser, DbSession, Res
from pixelmill.db.models import WebhookEndpoint
from pixelmill.webhooks import registry

router = APIRouter(prefix="/api/v2", tags=["v2 webhooks"])


class WebhookCreate(BaseModel):
    url: str = Field(min_length=1, max_length=2000, description="http(s) URL to POST events to")
    secret: str | None = Field(
        None,
        min_length=8,
        max_length=255,
        description="signing secret (whsec_<base64> or any string); generated when absent",
    )


class WebhookOut(BaseModel):
    id: int
    url: str
    created_at: str
    secret: str | None = Field(None, description="shown only in the create response")


def webhook_body(endpoint: WebhookEndpoint, with_secret: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": endpoint.id,
        "url": endpoint.url,
        "created_at": endpoint.created_at.isoformat().replace("+00:00", "Z"),
    }
    if with_secret:
        body["secret"] = endpoint.secret
    return body


@router.post("/webhooks", response_model=WebhookOut, response_model_exclude_none=True)
async def create_webhook(body: WebhookCreate, user: ApiKeyUser, resources: Res) -> dict[str, Any]:
    """Register a URL for ``batch.completed``, ``job.completed`` and ``job.failed``. The
    response shows the signing secret; it is not shown again."""
    await asyncio.to_thread(registry.check_webhook_url, body.url, resources.settings)

    def create(session: Session) -> dict[str, Any]:
        endpoint = registry.create_endpoint(session, user.id, body.url, body.secret)
        return webhook_body(endpoint, with_secret=True)

    return await resources.db.transact(create)


@router.get("/webhooks", response_model=list[WebhookOut], response_model_exclude_none=True)
def list_webhooks(user: ApiKeyUser, resources: Res) -> list[dict[str, Any]]:
    """The account's webhooks (secrets are not shown)."""
    with resources.db.read() as session:
        return [webhook_body(e, False) for e in registry.list_endpoints(session, user.id)]


@router.delete("/webhooks/{webhook_id}")
def delete_webhook(webhook_id: int, user: ApiKeyUser, session: DbSession) -> dict[str, Any]:
    """Remove a webhook (404 for an id that is not the account's)."""
    registry.delete_endpoint(session, user.id, webhook_id)
    return {"id": webhook_id, "deleted": True}
