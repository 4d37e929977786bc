"""The money and the history of synchronous runs: reserve the price before the engine runs,
then either capture it and write the ``completed`` history row, or release it and write the
``failed`` row. Each step is one short transaction of its own (blocking; call it in a thread),
so the database is never held while an engine works.

A process that dies between the reservation and its settlement leaves a held reservation:
:meth:`Accounting.release_stale` (run by the maintenance sweep) gives it back."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Final

from pixelmill.credits import ledger
from pixelmill.db.base import utcnow
from pixelmill.db.models import ProcessingRecord
from pixelmill.db.session import Database
from pixelmill.operations.results import StoredImage

log = logging.getLogger("pixelmill.pipeline")

SYNC_PURPOSE_PREFIX: Final = "sync:"
"""Reservation purposes of synchronous runs start with this (jobs have their own sweeper)."""

STALE_RESERVATION_AFTER: Final = timedelta(minutes=30)
"""A synchronous reservation still held this long after it was taken belongs to a request that
died (a run takes seconds, not minutes): the sweep releases it."""


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

    def __init__(self, db: Database) -> None:
        self.db = db

    def reserve(self, charge: Charge) -> Charge:
        """Take ``charge.price`` from the balance (402 if it is short); the charge, now
        holding its reservation."""
        with self.db.transaction() as session:
            held = ledger.reserve(
                session, charge.user_id, charge.price, SYNC_PURPOSE_PREFIX + charge.operation
            )
        return replace(charge, reservation_id=held.id)

    def complete(
        self,
        charge: Charge,
        elapsed: float,
        primary: StoredImage | None,
        details: dict[str, Any],
    ) -> int:
        """Capture the credits and record the ``completed`` history row in one transaction;
        the balance left."""
        with self.db.transaction() as session:
            if charge.reservation_id is not None:
                ledger.settle(session, charge.reservation_id, charge.price)
            session.add(
                _history_row(
                    charge,
                    status="completed",
                    credits_used=charge.price,
                    processing_time=round(elapsed, 3),
                    result_key=primary.key if primary else None,
                    result_format=primary.format if primary else None,
                    details=details,
                )
            )
            return ledger.balance(session, charge.user_id)

    def fail(self, charge: Charge, exc: BaseException) -> None:
        """Release the reservation and record the ``failed`` history row. Never raises: a
        release that cannot be written now is logged and left to :meth:`release_stale`."""
        if charge.reservation_id is None:
            return
        try:
            with self.db.transaction() as session:
                ledger.release(session, charge.reservation_id)
                session.add(
                    _history_row(
                        charge,
                        status="failed",
                        credits_used=0,
                        error=str(exc)[:500] or type(exc).__name__,
                        details={},
                    )
                )
        except Exception:
            log.exception("could not release reservation %s", charge.reservation_id)

    def release_stale(self) -> int:
        """Release reservations of synchronous runs held longer than
        :data:`STALE_RESERVATION_AFTER`; how many. Safe to run concurrently."""
        with self.db.transaction() as session:
            return ledger.release_stale(
                session, utcnow() - STALE_RESERVATION_AFTER, SYNC_PURPOSE_PREFIX
            )


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
