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
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from pixelmill.config import Settings
from pixelmill.db.base import utcnow
from pixelmill.db.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from pixelmill.imaging import ImageInputError, pinned_request
from pixelmill.queue import TaskQueue, dispatch_after_commit
from pixelmill.webhooks.registry import account_secret, owned_endpoints, webhook_policy
from pixelmill.webhooks.signing import headers

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
    account's newest registered endpoint, or the account's own signing secret when there is
    none (every delivery is signed). Returns the delivery ids. Delivery starts after the
    caller's transaction commits."""
    endpoints: Sequence[WebhookEndpoint] = session.scalars(
        owned_endpoints(user_id).order_by(WebhookEndpoint.id.desc())
    ).all()
    targets: list[tuple[str, str]]
    if url_override:
        secret = endpoints[0].secret if endpoints else account_secret(session, user_id)
        targets = [(url_override, secret)]
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


@dataclass(frozen=True)
class Attempt:
    """One claimed delivery attempt: what to send, and its number."""

    delivery_id: str
    url: str
    secret: str
    body: bytes
    number: int


@dataclass(frozen=True)
class Response:
    status_code: int | None
    text: str
    error: str | None
    duration_ms: int

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def claim(session: Session, delivery_id: str, settings: Settings) -> Attempt | None:
    """Take the next attempt of a pending, due delivery (a conditional update: a duplicate
    task gets None)."""
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
    delivery = session.get(WebhookDelivery, delivery_id)
    assert delivery is not None
    return Attempt(
        delivery_id, delivery.url, delivery.secret, delivery.payload.encode(), delivery.attempts
    )


def send(attempt: Attempt, settings: Settings) -> Response:
    """POST the signed payload through the SSRF guard (blocking; never raises)."""
    started = time.perf_counter()
    status_code: int | None = None
    response_text = ""
    error: str | None = None
    try:
        response = pinned_request(
            "POST",
            attempt.url,
            webhook_policy(settings),
            content=attempt.body,
            headers=headers(
                attempt.secret or None, attempt.delivery_id, int(time.time()), attempt.body
            ),
        )
        status_code = response.status_code
        response_text = response.content[:RESPONSE_LOG_CHARS].decode("utf-8", "replace")
    except ImageInputError as exc:
        error = f"{exc.code}: {exc}"
    except Exception as exc:  # a receiver's failure is delivery state, never a crash
        error = f"{type(exc).__name__}: {exc}"
    duration_ms = int((time.perf_counter() - started) * 1000)
    return Response(status_code, response_text, error, duration_ms)


def record(
    session: Session, queue: TaskQueue, settings: Settings, attempt: Attempt, response: Response
) -> str:
    """Log the attempt and settle the delivery: ``delivered``, ``failed`` after the last
    attempt, or a retry dispatched after the caller's commit. Returns the status."""
    session.add(
        WebhookAttempt(
            delivery_id=attempt.delivery_id,
            number=attempt.number,
            status_code=response.status_code,
            duration_ms=response.duration_ms,
            response_body=response.text,
            error=response.error[:RESPONSE_LOG_CHARS] if response.error else None,
        )
    )
    if response.ok:
        values: dict[str, Any] = {"status": "delivered", "delivered_at": utcnow()}
    elif attempt.number >= settings.webhook_max_attempts:
        values = {"status": "failed"}
    else:
        delay = retry_delay(settings, attempt.number)
        values = {"next_attempt_at": utcnow() + timedelta(seconds=delay)}
        dispatch_after_commit(session, queue, TASK, attempt.delivery_id, delay=delay)
    session.execute(
        update(WebhookDelivery).where(WebhookDelivery.id == attempt.delivery_id).values(**values)
    )
    if not response.ok:
        log.info(
            "webhook %s attempt %d to %s: %s",
            attempt.delivery_id,
            attempt.number,
            attempt.url,
            response.error or response.status_code,
        )
    return str(values.get("status", "pending"))


def dispatch_overdue(session: Session, queue: TaskQueue, grace_seconds: float = 60.0) -> int:
    """Dispatch (after the caller's commit) deliveries whose retry time passed without a task
    running them (a restart lost the timer or the message). Returns how many."""
    cutoff = utcnow() - timedelta(seconds=grace_seconds)
    ids = session.scalars(
        select(WebhookDelivery.id)
        .where(WebhookDelivery.status == "pending", WebhookDelivery.next_attempt_at < cutoff)
        .limit(500)
    ).all()
    for delivery_id in ids:
        dispatch_after_commit(session, queue, TASK, delivery_id)
    return len(ids)
