"""The money and the history of synchronous runs: reserve the price before the engine runs,
then either capture it and write the ``completed`` history row, or release it and write the
``failed`` row. Each step is one short transaction of its own (blocking; call it in a thread),
so the database is never held while an engine works.

A process that dies between the reservation and its settlement leaves a held reservation. A
live run renews the reservation's heartbeat (:meth:`Accounting.keep_alive`) every quarter of
``PIXELMILL_SYNC_RESERVATION_TIMEOUT_SECONDS``; :meth:`Accounting.release_stale` (run by the
maintenance sweep) gives back reservations silent longer than that timeout and records the
dead run's ``failed`` history row."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, replace
from datetime import timedelta
from typing import Any, Final

from sqlalchemy.orm import Session

from pixelmill.credits import ledger
from pixelmill.credits.headers import note_charge
from pixelmill.db.base import utcnow
from pixelmill.db.models import ProcessingRecord
from pixelmill.db.session import Database
from pixelmill.operations.results import StoredImage

log = logging.getLogger("pixelmill.pipeline")

SYNC_PURPOSE_PREFIX: Final = "sync:"
"""Reservation purposes of synchronous runs start with this (jobs have their own sweeper)."""

DEAD_RUN_ERROR: Final = (
    "the server process handling this request stopped before it finished; credits returned"
)


@dataclass(frozen=True)
class Charge:
    """One account's synchronous run, as its ledger and history rows need it."""

    processing_id: str
    user_id: int
    operation: str
    surface: str
    price: int
    input_width: int
    input_height: int
    reservation_id: str | None = None


class Accounting:
    """Reservations, settlements and history rows of synchronous runs."""

    def __init__(self, db: Database, reservation_timeout_seconds: float) -> None:
        self.db = db
        self.reservation_timeout = timedelta(seconds=reservation_timeout_seconds)
        # Several renewals fit in one timeout, so one slow or failed write is not a release.
        self.heartbeat_interval = reservation_timeout_seconds / 4

    def reserve(self, charge: Charge) -> Charge:
        """Take ``charge.price`` from the balance (402 if it is short); the charge, now
        holding its reservation."""
        with self.db.transaction() as session:
            held = _hold(session, charge)
        return replace(charge, reservation_id=held.id)

    def renew(self, charge: Charge) -> bool:
        """One heartbeat: the run holding ``charge`` is alive. False once it is settled."""
        if charge.reservation_id is None:
            return False
        with self.db.transaction() as session:
            return ledger.renew(session, charge.reservation_id)

    @asynccontextmanager
    async def keep_alive(self, charge: Charge | None) -> AsyncIterator[None]:
        """Renew the reservation's heartbeat while the body runs (a task on the event loop,
        so it stops with the process: a dead run stops renewing by itself). Nothing to renew
        for an anonymous or free run."""
        if charge is None or charge.reservation_id is None:
            yield
            return

        held = charge

        async def beat() -> None:
            while True:
                await asyncio.sleep(self.heartbeat_interval)
                try:
                    await asyncio.to_thread(self.renew, held)
                except Exception:  # the next beat tries again; the timeout allows several
                    log.warning("heartbeat of reservation %s failed", charge.reservation_id)

        task = asyncio.create_task(beat(), name=f"heartbeat-{charge.reservation_id}")
        try:
            yield
        finally:
            task.cancel()

    def complete(
        self,
        charge: Charge,
        elapsed: float,
        primary: StoredImage | None,
        details: dict[str, Any],
        record: Callable[[Session], object] | None = None,
    ) -> int:
        """Capture the credits and record the ``completed`` history row in one transaction;
        the balance left. ``record`` writes the caller's own rows for the delivered work in
        that same transaction: both land, or neither (and the run fails and is released).

        If the sweeper released the reservation meanwhile (the run's heartbeat was silent past
        the timeout, e.g. the database was unreachable that long), the delivered work is
        charged anew with a fresh conditional reservation: never twice, never below zero
        (402 when the balance no longer covers it, the run then recorded as failed)."""
        with self.db.transaction() as session:
            if charge.reservation_id is not None:
                captured = ledger.capture(
                    session, charge.reservation_id, charge.price, charge.operation
                )
                ledger.release(session, charge.reservation_id)
                if not captured:
                    log.warning(
                        "reservation %s was released before its run finished; charging anew",
                        charge.reservation_id,
                    )
                    again = _hold(session, charge)
                    ledger.settle(session, again.id, charge.price, charge.operation)
            _record(
                session,
                charge,
                status="completed",
                credits_used=charge.price,
                processing_time=round(elapsed, 3),
                result_key=primary.key if primary else None,
                result_format=primary.format if primary else None,
                details=details,
                error=None,
            )
            if record is not None:
                record(session)
            remaining = ledger.balance(session, charge.user_id)
        note_charge(charge.price, remaining)
        return remaining

    def complete_free(self, user_id: int, record: Callable[[Session], object] | None) -> int:
        """End a test key's run, which is never charged: no ledger entry, no history row; the
        caller's ``record`` (if any) in one transaction. The balance, unchanged, and a note
        that the call took 0 credits (``X-Credits-Charged: 0``)."""
        with self.db.transaction() as session:
            if record is not None:
                record(session)
            remaining = ledger.balance(session, user_id)
        note_charge(0, remaining)
        return remaining

    def fail(self, charge: Charge, exc: BaseException) -> None:
        """Release the reservation and record the ``failed`` history row. Never raises: a
        release that cannot be written now is logged and left to :meth:`release_stale`."""
        if charge.reservation_id is None:
            return
        try:
            with self.db.transaction() as session:
                ledger.release(session, charge.reservation_id)
                _record(
                    session,
                    charge,
                    status="failed",
                    credits_used=0,
                    error=str(exc)[:500] or type(exc).__name__,
                    details={},
                )
        except Exception:
            log.exception("could not release reservation %s", charge.reservation_id)

    def release_stale(self) -> int:
        """Release reservations of synchronous runs whose heartbeat has been silent longer than
        the timeout, each with its ``failed`` history row; how many. Safe to run concurrently:
        each reservation is released (and recorded) once."""
        with self.db.transaction() as session:
            released = ledger.release_stale(
                session, utcnow() - self.reservation_timeout, SYNC_PURPOSE_PREFIX
            )
            for settled in released:
                charge = _charge_of(settled)
                _record(
                    session,
                    charge,
                    status="failed",
                    credits_used=0,
                    error=DEAD_RUN_ERROR,
                    details={"reservation_id": settled.id, "credits_returned": settled.refund},
                )
                log.warning(
                    "released reservation %s of a dead %s run (%d credits returned)",
                    settled.id,
                    charge.operation,
                    settled.refund,
                )
            return len(released)


def _hold(session: Session, charge: Charge) -> ledger.Reservation:
    """Reserve the charge's price, with what settling it needs if its holder dies."""
    purpose = SYNC_PURPOSE_PREFIX + charge.operation
    return ledger.reserve(session, charge.user_id, charge.price, purpose, _context(charge))


def _context(charge: Charge) -> dict[str, Any]:
    """What the sweeper needs to record the run's history row if its process dies."""
    return {k: v for k, v in asdict(charge).items() if k not in ("reservation_id", "price")}


def _charge_of(settled: ledger.Settlement) -> Charge:
    """The charge of a released reservation, rebuilt from its context (reservations taken
    before the context was kept have none: a new history id, surface unknown)."""
    ctx = settled.context or {}
    return Charge(
        processing_id=str(ctx.get("processing_id") or uuid.uuid4().hex),
        user_id=settled.user_id,
        operation=str(ctx.get("operation") or settled.purpose.removeprefix(SYNC_PURPOSE_PREFIX)),
        surface=str(ctx.get("surface") or "unknown"),
        price=0,
        input_width=int(ctx.get("input_width") or 0),
        input_height=int(ctx.get("input_height") or 0),
        reservation_id=settled.id,
    )


def _record(session: Session, charge: Charge, **fields: Any) -> None:
    """Write the run's history row, or overwrite it: a run the sweeper recorded as dead that
    then finishes after all ends up with one row, its real outcome."""
    session.merge(_history_row(charge, **fields))


def _history_row(charge: Charge, **fields: Any) -> ProcessingRecord:
    return ProcessingRecord(
        id=charge.processing_id,
        user_id=charge.user_id,
        operation=charge.operation,
        surface=charge.surface,
        input_width=charge.input_width,
        input_height=charge.input_height,
        **fields,
    )
