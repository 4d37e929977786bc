"""The one create path of every asynchronous create endpoint: replay a stored response for a
repeated ``Idempotency-Key``, otherwise prepare off the event loop, then create and remember
the response in one transaction on a worker thread."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from fastapi import Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy.orm import Session

from pixelmill import idempotency
from pixelmill.db.models import User
from pixelmill.db.session import Database

T = TypeVar("T")


async def idempotent_create(
    request: Request,
    db: Database,
    user: User,
    body: BaseModel,
    status_code: int,
    prepare: Callable[[], Awaitable[T]],
    create: Callable[[Session, T], BaseModel],
    discard: Callable[[T], object] | None = None,
) -> JSONResponse:
    """``prepare`` does the slow, transaction-free work (URL checks, image decoding and
    storing) and its result is handed to ``create``, which runs in the transaction that also
    stores the response under the request's ``Idempotency-Key`` (either both commit or
    neither). When ``create`` refuses (a 404, a 402...), ``discard`` removes what ``prepare``
    stored."""
    attempt = await asyncio.to_thread(
        idempotency.begin,
        db,
        user.id,
        request.headers.get("Idempotency-Key"),
        request.url.path,
        body.model_dump(),
    )
    if attempt.stored is not None:
        return JSONResponse(attempt.stored.body, status_code=attempt.stored.status_code)
    prepared = await prepare()

    def run(session: Session) -> dict[str, object]:
        payload = create(session, prepared).model_dump(mode="json")
        attempt.save(session, status_code, payload)
        return payload

    try:
        payload = await db.transact(run)
    except Exception:
        if discard is not None:
            await asyncio.to_thread(discard, prepared)
        raise
    return JSONResponse(payload, status_code=status_code)
