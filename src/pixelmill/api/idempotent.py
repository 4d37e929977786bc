"""The one create path of every asynchronous create endpoint: replay a stored response for a
repeated ``Idempotency-Key``, otherwise prepare the domain's create request
(:class:`pixelmill.jobs.requests.JobRequest`) off the event loop, then create and remember
the response in one transaction on a worker thread."""

from __future__ import annotations

import asyncio

from fastapi import Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy.orm import Session

from pixelmill import idempotency
from pixelmill.credits.headers import note_charge
from pixelmill.db.models import User
from pixelmill.db.session import Database
from pixelmill.jobs.requests import JobRequest


async def idempotent_create(
    request: Request,
    db: Database,
    user: User,
    body: BaseModel,
    status_code: int,
    create: JobRequest,
) -> JSONResponse:
    """Either both the create and the response stored under the request's ``Idempotency-Key``
    commit, or neither."""
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
    await create.prepare()

    def run(session: Session) -> dict[str, object]:
        payload = create.create(session).model_dump(mode="json")
        attempt.save(session, status_code, payload)
        return payload

    try:
        payload = await db.transact(run)
    except Exception:
        await asyncio.to_thread(create.discard)
        raise
    reserved, remaining = payload.get("credits_reserved"), payload.get("credits_remaining")
    if isinstance(reserved, int) and isinstance(remaining, int):
        note_charge(reserved, remaining)
    return JSONResponse(payload, status_code=status_code)
