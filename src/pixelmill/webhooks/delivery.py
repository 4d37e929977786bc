"""Webhook delivery: events become ``webhook_deliveries`` rows in the transaction that caused
them, the ``"webhooks.deliver"`` task is dispatched after commit, and every attempt is claimed
with a conditional update (a duplicate task sends nothing), signed, sent through the SSRF guard
and logged (status code, duration, the first bytes of the response). Failures are retried with
exponential backoff: ``base * 4**(n-1)``, capped at 10 hours, ``webhook_max_attempts`` in all.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from pixelmill.config import Settings
from pixelmill.db.base import utcnow
from pixelmill.db.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from pixelmill.imaging import ImageInputError, pinned_request
from pixelmill.queue import TaskQueue, dispatch_after_commit
from pixelmill.webhooks.registry import webhook_policy
from pixelmill.webhooks.signing import headers

if TYPE_CHECKING:
    from pixelmill.resources import Resources

log = logging.getLogger("pixelmill.webhooks")

TASK = "webhooks.deliver"
RESPONSE_LOG_CHARS = 1000
MAX_DELAY_SECONDS = 10 * 3600


def retry_delay(settings: Settings, attempts_made: int) -> float:
    """Seconds to wait after attempt number ``attempts_made`` failed."""
    delay = float(settings.webhook_retry_base_seconds) * 4.0 ** (attempts_made - 1)
    return min(delay, float(MAX_DELAY_SECONDS))


def emit(
    session: Session,
    queue: TaskQueue,
    user_id: int,
    event: str,
    payload: dict[str, Any],
    url_override: str | None = None,
) -> list[str]:
    """Queue ``event`` for the account's webhooks: ``url_override`` (the request's own
    ``webhook_url``) replaces the registered endpoints; it is signed with the secret of the
    account's newest registered endpoint (unsigned when there is none). Returns the delivery
    ids. Delivery starts after the caller's transaction commits."""
    endpoints: Sequence[WebhookEndpoint] = session.scalars(
        select(WebhookEndpoint)
        .where(WebhookEndpoint.user_id == user_id)
        .order_by(WebhookEndpoint.id.desc())
    ).all()
    targets: list[tuple[str, str]]
    if url_override:
        targets = [(url_override, endpoints[0].secret if endpoints else "")]
    else:
        targets = [(e.url, e.secret) for e in endpoints]
    body = json.dumps(payload, separators=(",", ":"), sort_keys=True)
    ids = []
    for url, secret in targets:
        delivery = WebhookDelivery(
            id="msg_" + uuid.uuid4().hex,
            user_id=user_id,
            event=event,
            url=url,
            secret=secret,
            payload=body,
            status="pending",
            attempts=0,
            next_attempt_at=utcnow(),
        )
        session.add(delivery)
        ids.append(delivery.id)
    session.flush()
    for delivery_id in ids:
        dispatch_after_commit(session, queue, TASK, delivery_id)
    return ids


def _claim(session: Session, delivery_id: str, settings: Settings) -> WebhookDelivery | None:
    now = utcnow()
    # While an attempt is in flight, push next_attempt_at past its deadline so the sweeper
    # leaves it alone.
    hold = now + timedelta(seconds=settings.webhook_timeout_seconds + 30)
    claimed = session.execute(
        update(WebhookDelivery)
        .where(
            WebhookDelivery.id == delivery_id,
            WebhookDelivery.status == "pending",
            WebhookDelivery.next_attempt_at <= now,
        )
        .values(attempts=WebhookDelivery.attempts + 1, next_attempt_at=hold)
        .returning(WebhookDelivery.id)
    ).first()
    if claimed is None:
        return None
    return session.get(WebhookDelivery, delivery_id)


def deliver(resources: Resources, delivery_id: str) -> str | None:
    """One delivery attempt (the ``"webhooks.deliver"`` task). Returns the delivery's status
    after the attempt, or None when there was nothing to do."""
    settings = resources.settings
    with resources.db.transaction() as session:
        delivery = _claim(session, delivery_id, settings)
        if delivery is None:
            return None
        url, secret, body, number = (
            delivery.url,
            delivery.secret,
            delivery.payload.encode(),
            delivery.attempts,
        )

    started = time.perf_counter()
    status_code: int | None = None
    response_text = ""
    error: str | None = None
    try:
        response = pinned_request(
            "POST",
            url,
            webhook_policy(settings),
            content=body,
            headers=headers(secret or None, delivery_id, int(time.time()), body),
        )
        status_code = response.status_code
        response_text = response.content[:RESPONSE_LOG_CHARS].decode("utf-8", "replace")
    except ImageInputError as exc:
        error = f"{exc.code}: {exc}"
    except Exception as exc:  # a receiver's failure is delivery state, never a crash
        error = f"{type(exc).__name__}: {exc}"
    duration_ms = int((time.perf_counter() - started) * 1000)
    ok = status_code is not None and 200 <= status_code < 300

    with resources.db.transaction() as session:
        session.add(
            WebhookAttempt(
                delivery_id=delivery_id,
                number=number,
                status_code=status_code,
                duration_ms=duration_ms,
                response_body=response_text,
                error=error[:RESPONSE_LOG_CHARS] if error else None,
            )
        )
        if ok:
            values: dict[str, Any] = {"status": "delivered", "delivered_at": utcnow()}
        elif number >= settings.webhook_max_attempts:
            values = {"status": "failed"}
        else:
            delay = retry_delay(settings, number)
            values = {"next_attempt_at": utcnow() + timedelta(seconds=delay)}
            dispatch_after_commit(session, resources.queue, TASK, delivery_id, delay=delay)
        session.execute(
            update(WebhookDelivery).where(WebhookDelivery.id == delivery_id).values(**values)
        )
    final = str(values.get("status", "pending"))
    if not ok:
        log.info("webhook %s attempt %d to %s: %s", delivery_id, number, url, error or status_code)
    return final


def sweep_deliveries(resources: Resources, grace_seconds: float = 60.0) -> int:
    """Dispatch deliveries whose retry time passed without a task running them (a restart lost
    the timer or the message). Returns how many were dispatched."""
    cutoff = utcnow() - timedelta(seconds=grace_seconds)
    with resources.db.read() as session:
        ids = session.scalars(
            select(WebhookDelivery.id)
            .where(WebhookDelivery.status == "pending", WebhookDelivery.next_attempt_at < cutoff)
            .limit(500)
        ).all()
    for delivery_id in ids:
        resources.queue.enqueue(TASK, delivery_id)
    return len(ids)
