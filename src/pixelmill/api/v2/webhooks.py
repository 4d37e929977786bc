"""Webhook endpoints of the account (``/api/v2/webhooks``). Deliveries are signed with the
endpoint's secret (Standard Webhooks: ``webhook-id``, ``webhook-timestamp``,
``webhook-signature``)."""

from __future__ import annotations

import asyncio
import json
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Path, Query
from sqlalchemy.orm import Session

from pixelmill.api.deps import ApiKeyUser, DbSession, ReadSession, Res
from pixelmill.db.models import WebhookAttempt, WebhookDelivery
from pixelmill.webhooks import log, registry
from pixelmill.webhooks.schemas import (
    AttemptOut,
    DeliveryList,
    DeliveryOut,
    SigningSecret,
    WebhookCreate,
    WebhookDeleted,
    WebhookOut,
)

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
def list_webhooks(user: ApiKeyUser, session: ReadSession) -> list[WebhookOut]:
    """The account's webhooks (secrets are not shown)."""
    endpoints = registry.list_endpoints(session, user.id)
    return [WebhookOut.model_validate(e).model_copy(update={"secret": None}) for e in endpoints]


@router.delete("/webhooks/{webhook_id}", response_model=WebhookDeleted)
def delete_webhook(webhook_id: WebhookId, user: ApiKeyUser, session: DbSession) -> WebhookDeleted:
    """Remove a webhook (404 for an id that is not the account's)."""
    registry.delete_endpoint(session, user.id, webhook_id)
    return WebhookDeleted(id=webhook_id)


def _delivery_out(delivery: WebhookDelivery, attempts: list[WebhookAttempt]) -> DeliveryOut:
    return DeliveryOut.from_row(
        delivery,
        next_attempt_at=delivery.next_attempt_at if delivery.status == "pending" else None,
        payload=json.loads(delivery.payload),
        attempt_log=[AttemptOut.model_validate(a) for a in attempts],
    )


@router.get("/webhooks/signing-secret", response_model=SigningSecret)
async def signing_secret(user: ApiKeyUser, resources: Res) -> SigningSecret:
    """The account's own signing secret (made on first request): deliveries to a job's or
    batch's ``webhook_url`` are signed with it while no webhook is registered."""
    secret = await resources.db.transact(partial(registry.account_secret, user_id=user.id))
    return SigningSecret(secret=secret)


@router.get("/webhooks/deliveries", response_model=DeliveryList)
def list_deliveries(
    user: ApiKeyUser,
    session: ReadSession,
    status: Annotated[str | None, Query(pattern="^(pending|delivered|failed)$")] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    offset: Annotated[int, Query(ge=0, le=10**6)] = 0,
) -> DeliveryList:
    """The delivery log: webhook messages sent for the account (to registered endpoints and
    per-request ``webhook_url``s), newest first, each with its attempts."""
    rows = log.list_deliveries(session, user.id, status=status, limit=limit, offset=offset)
    attempts = log.attempts_of(session, [d.id for d in rows])
    out = [_delivery_out(d, attempts[d.id]) for d in rows]
    return DeliveryList(deliveries=out, limit=limit, offset=offset)


@router.get("/webhooks/deliveries/{delivery_id}", response_model=DeliveryOut)
def get_delivery(
    delivery_id: Annotated[str, Path(max_length=64, pattern="^[A-Za-z0-9_-]+$")],
    user: ApiKeyUser,
    session: ReadSession,
) -> DeliveryOut:
    """One delivery and its attempts (404 for another account's)."""
    delivery = log.get_delivery(session, user.id, delivery_id)
    return _delivery_out(delivery, log.attempts_of(session, [delivery.id])[delivery.id])
