"""The one create path of every asynchronous create endpoint: replay a stored response for a
repeated ``Idempotency-Key``, otherwise prepare the domain's create request
(:class:`pixelmill.jobs.requests.JobRequest`) off the event loop, then create and remember
the response in one transaction on a worker thread."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from fastapi import Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy.orm import Session

from pixelmill import idempotency
from pixelmill.db.models import User
from pixelmill.db.session import Database
from pixelmill.jobs.requests import JobRequest

T = TypeVar("T")


@dataclass
class Closures(Generic[T]):
    """The old spelling, for create endpoints not yet moved to a domain request:
    ``prepare``'s result is handed to ``create`` and, after a refusal, to ``discard``."""

    prepare_: Callable[[], Awaitable[T]]
    create_: Callable[[Session, T], BaseModel]
    discard_: Callable[[T], object] | None = None
    prepared: T | None = field(default=None, init=False)

    async def prepare(self) -> None:
        self.prepared = await self.prepare_()

    def create(self, session: Session) -> BaseModel:
        return self.create_(session, self.prepared)  # type: ignore[arg-type]

    def discard(self) -> None:
        if self.discard_ is not None:
            self.discard_(self.prepared)  # type: ignore[arg-type]


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
    return JSONResponse(payload, status_code=status_code)
