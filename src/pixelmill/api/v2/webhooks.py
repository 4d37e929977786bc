"""Webhook endpoints of the account (``/api/v2/webhooks``). Deliveries are signed with the
endpoint's secret (Standard Webhooks: ``webhook-id``, ``webhook-timestamp``,
``webhook-signature``)."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Path
from sqlalchemy.orm import Session

from pixelmill.api.deps import ApiKeyUser, DbSession, Res
from pixelmill.webhooks import registry
from pixelmill.webhooks.schemas import Deleted, WebhookCreate, WebhookOut

router = APIRouter(prefix="/api/v2", tags=["v2 webhooks"])

# The ids the ``webhook_endpoints.id`` column can hold (INTEGER: 32 bits on PostgreSQL); a
# larger number is a 422 here instead of an overflow in the database driver.
WebhookId = Annotated[int, Path(ge=1, le=2**31 - 1, description="the webhook's id")]


@router.post("/webhooks", response_model=WebhookOut, response_model_exclude_none=True)
async def create_webhook(body: WebhookCreate, user: ApiKeyUser, resources: Res) -> WebhookOut:
    """Register a URL for ``batch.completed``, ``job.completed`` and ``job.failed``. The
    response shows the signing secret; it is not shown again."""
    await asyncio.to_thread(registry.check_webhook_url, body.url, resources.settings)

    def create(session: Session) -> WebhookOut:
        endpoint = registry.create_endpoint(session, user.id, body.url, body.secret)
        return WebhookOut.model_validate(endpoint)

    return await resources.db.transact(create)


@router.get("/webhooks", response_model=list[WebhookOut], response_model_exclude_none=True)
def list_webhooks(user: ApiKeyUser, resources: Res) -> list[WebhookOut]:
    """The account's webhooks (secrets are not shown)."""
    with resources.db.read() as session:
        endpoints = registry.list_endpoints(session, user.id)
        return [WebhookOut.model_validate(e).model_copy(update={"secret": None}) for e in endpoints]


@router.delete("/webhooks/{webhook_id}", response_model=Deleted)
def delete_webhook(webhook_id: WebhookId, user: ApiKeyUser, session: DbSession) -> Deleted:
    """Remove a webhook (404 for an id that is not the account's)."""
    registry.delete_endpoint(session, user.id, webhook_id)
    return Deleted(id=webhook_id)
