"""The account's delivery log: every webhook message sent on its behalf (to a registered
endpoint or a per-request ``webhook_url``) with each attempt, newest first. Reads only."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from pixelmill.db.models import WebhookAttempt, WebhookDelivery
from pixelmill.errors import NotFound


def _owned_deliveries(user_id: int) -> Select[WebhookDelivery]:
    """Every read of deliveries starts here: another account's delivery is never found."""
    return select(WebhookDelivery).where(WebhookDelivery.user_id == user_id)


def list_deliveries(
    session: Session, user_id: int, *, status: str | None, limit: int, offset: int
) -> Sequence[WebhookDelivery]:
    stmt = _owned_deliveries(user_id)
    if status:
        stmt = stmt.where(WebhookDelivery.status == status)
    stmt = stmt.order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id)
    return session.scalars(stmt.limit(limit).offset(offset)).all()


def get_delivery(session: Session, user_id: int, delivery_id: str) -> WebhookDelivery:
    delivery = session.scalar(_owned_deliveries(user_id).where(WebhookDelivery.id == delivery_id))
    if delivery is None:
        raise NotFound("Delivery not found")
    return delivery


def attempts_of(session: Session, delivery_ids: Sequence[str]) -> dict[str, list[WebhookAttempt]]:
    """The attempts of deliveries already read through :func:`_owned_deliveries`."""
    out: dict[str, list[WebhookAttempt]] = {d: [] for d in delivery_ids}
    if not delivery_ids:
        return out
    rows = session.scalars(
        select(WebhookAttempt)
        .where(WebhookAttempt.delivery_id.in_(delivery_ids))
        .order_by(WebhookAttempt.delivery_id, WebhookAttempt.number)
    )
    for attempt in rows:
        out[attempt.delivery_id].append(attempt)
    return out
