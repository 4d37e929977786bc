"""Registered webhook endpoints, always read through a query scoped to the account."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from sqlalchemy import Select, delete, select, update
from sqlalchemy.orm import Session

from pixelmill.config import Settings
from pixelmill.db.models import User, WebhookEndpoint
from pixelmill.errors import AppError, InvalidInput, NotFound
from pixelmill.imaging import FetchPolicy, ImageInputError, check_url_allowed
from pixelmill.webhooks.signing import generate_secret

MAX_ENDPOINTS = 20


def webhook_policy(settings: Settings) -> FetchPolicy:
    """The SSRF rules for webhook URLs: the same as for image URLs."""
    return FetchPolicy(
        allow_loopback=settings.allow_loopback_urls,
        max_bytes=64 * 1024,
        timeout_s=settings.webhook_timeout_seconds,
        max_redirects=0,
    )


def check_webhook_url(url: str, settings: Settings) -> None:
    """Refuse a URL the delivery could never reach (bad scheme, private or metadata address).
    Blocking: resolves the host."""
    if not url.startswith(("http://", "https://")):
        raise InvalidInput("webhook_url must be an http(s) URL")
    try:
        check_url_allowed(url, webhook_policy(settings))
    except ImageInputError as exc:
        raise AppError(f"webhook URL refused: {exc}", status_code=400, code=exc.code) from exc


async def checked_webhook_url(url: str | None, settings: Settings) -> str | None:
    """A request's optional ``webhook_url``, checked in a thread (it resolves the host);
    None when absent or empty."""
    if url:
        await asyncio.to_thread(check_webhook_url, url, settings)
    return url or None


def create_endpoint(
    session: Session, user_id: int, url: str, secret: str | None
) -> WebhookEndpoint:
    """Register ``url``; generates a ``whsec_`` secret when none is given. The URL must have
    passed :func:`check_webhook_url`."""
    count = len(list_endpoints(session, user_id))
    if count >= MAX_ENDPOINTS:
        raise InvalidInput(f"at most {MAX_ENDPOINTS} webhooks per account")
    endpoint = WebhookEndpoint(user_id=user_id, url=url, secret=secret or generate_secret())
    session.add(endpoint)
    session.flush()
    return endpoint


def owned_endpoints(user_id: int) -> Select[WebhookEndpoint]:
    """Every read of endpoints starts here: another account's endpoint is never found."""
    return select(WebhookEndpoint).where(WebhookEndpoint.user_id == user_id)


def list_endpoints(session: Session, user_id: int) -> Sequence[WebhookEndpoint]:
    return session.scalars(owned_endpoints(user_id).order_by(WebhookEndpoint.id)).all()


def delete_endpoint(session: Session, user_id: int, webhook_id: int) -> None:
    gone = session.execute(
        delete(WebhookEndpoint)
        .where(WebhookEndpoint.id == webhook_id, WebhookEndpoint.user_id == user_id)
        .returning(WebhookEndpoint.id)
    ).first()
    if gone is None:
        raise NotFound("Webhook not found")


def account_secret(session: Session, user_id: int) -> str:
    """The account's own signing secret (made on first need, once: a conditional update),
    used for deliveries to a per-request ``webhook_url`` when no endpoint is registered."""
    secret = session.scalar(select(User.webhook_secret).where(User.id == user_id))
    if secret:
        return secret
    session.execute(
        update(User)
        .where(User.id == user_id, User.webhook_secret.is_(None))
        .values(webhook_secret=generate_secret())
    )
    made = session.scalar(select(User.webhook_secret).where(User.id == user_id))
    if not made:
        raise NotFound("User not found")
    return made
