"""``Idempotency-Key`` on create calls: the first response is stored with a hash of the
request; the same key with the same request returns that response again for 24 hours (nothing
is created or reserved twice), the same key with a different request is a 409.

The record is written in the same transaction as what the request created, so either both exist
or neither does. Two concurrent first requests with one key: the unique constraint lets one
commit; the other is answered 409 and can retry to get the stored response.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from pixelmill.db.base import utcnow
from pixelmill.db.models import IdempotencyKey
from pixelmill.db.session import Database
from pixelmill.errors import Conflict, InvalidInput

TTL = timedelta(hours=24)
MAX_KEY_LENGTH = 255


@dataclass(frozen=True)
class Stored:
    status_code: int
    body: dict[str, Any]


def request_hash(endpoint: str, body: Any) -> str:
    canonical = json.dumps([endpoint, body], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def check_key(key: str) -> str:
    key = key.strip()
    if not key or len(key) > MAX_KEY_LENGTH:
        raise InvalidInput(f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} characters")
    return key


def lookup(session: Session, user_id: int, key: str, digest: str) -> Stored | None:
    """The stored response for ``key`` if it is younger than 24 h; a 409 when the key was used
    for a different request."""
    row = session.scalar(
        select(IdempotencyKey).where(
            IdempotencyKey.user_id == user_id,
            IdempotencyKey.key == key,
            IdempotencyKey.created_at >= utcnow() - TTL,
        )
    )
    if row is None:
        return None
    if row.request_hash != digest:
        raise Conflict("This Idempotency-Key was already used with a different request")
    return Stored(row.status_code, dict(row.response))


def remember(
    session: Session,
    user_id: int,
    key: str,
    endpoint: str,
    digest: str,
    status_code: int,
    body: dict[str, Any],
) -> None:
    """Store the response in the caller's transaction (replacing an expired record)."""
    old = session.scalar(
        select(IdempotencyKey).where(IdempotencyKey.user_id == user_id, IdempotencyKey.key == key)
    )
    if old is not None:
        session.delete(old)
        session.flush()
    session.add(
        IdempotencyKey(
            user_id=user_id,
            key=key,
            endpoint=endpoint,
            request_hash=digest,
            status_code=status_code,
            response=body,
        )
    )
    try:
        session.flush()
    except IntegrityError as exc:
        raise Conflict(
            "A request with this Idempotency-Key is in progress; retry to get its response"
        ) from exc


@dataclass(frozen=True)
class Attempt:
    """One create request's idempotency state: ``stored`` is the response to replay, if any;
    :meth:`save` records this request's response (a no-op without a key)."""

    user_id: int
    key: str | None
    endpoint: str
    digest: str
    stored: Stored | None

    def save(self, session: Session, status_code: int, body: dict[str, Any]) -> None:
        if self.key is not None:
            remember(session, self.user_id, self.key, self.endpoint, self.digest, status_code, body)


def begin(db: Database, user_id: int, header: str | None, endpoint: str, body: Any) -> Attempt:
    """Look the key up in a short read-only transaction (nothing is locked while the request
    then decodes images). Blocking: async callers run it in a thread."""
    if header is None:
        return Attempt(user_id, None, endpoint, "", None)
    key = check_key(header)
    digest = request_hash(endpoint, body)
    with db.read() as session:
        stored = lookup(session, user_id, key, digest)
    return Attempt(user_id, key, endpoint, digest, stored)


def expire(session: Session) -> int:
    """Delete records older than the TTL (the maintenance sweep). Returns how many."""
    gone = session.execute(
        delete(IdempotencyKey)
        .where(IdempotencyKey.created_at < utcnow() - TTL)
        .returning(IdempotencyKey.id)
    ).all()
    return len(gone)
