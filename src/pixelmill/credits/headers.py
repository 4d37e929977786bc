"""The credit headers integrators read (as remove.bg and Picsart send them): every charged
response carries ``X-Credits-Charged`` (what this call took: a job's reservation on its
create) and ``X-Credits-Remaining`` (the balance after it). The front door opens a note per
request (:func:`open_note`); the code that charges writes into it (:func:`note_charge`) once its
transaction has committed; the middleware turns the note into headers."""

from __future__ import annotations

from contextvars import ContextVar

_NOTE: ContextVar[dict[str, str] | None] = ContextVar("pixelmill_credit_note", default=None)


def open_note() -> dict[str, str]:
    """A fresh note for this request (threads the request runs work on share it)."""
    note: dict[str, str] = {}
    _NOTE.set(note)
    return note


def note_charge(charged: int, remaining: int) -> None:
    """This request took ``charged`` credits and left ``remaining`` (no-op outside a request)."""
    note = _NOTE.get()
    if note is not None:
        note["X-Credits-Charged"] = str(charged)
        note["X-Credits-Remaining"] = str(remaining)
