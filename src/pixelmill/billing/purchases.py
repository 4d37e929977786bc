"""Credit packs bought through Stripe Checkout: the pending purchase recorded when a checkout
starts, and the webhook events that settle it (docs/billing.md, "Event handling").

* ``checkout.session.completed`` (or ``checkout.session.async_payment_succeeded``) with the
  payment made grants the purchase's credits through the ledger (kind ``purchase``) exactly
  once: each event id is handled once (``stripe_events``), and the purchase moves
  ``pending -> paid`` in a conditional UPDATE, so a second event about the same session grants
  nothing.
* ``charge.refunded`` takes back the credits of the part refunded (Stripe reports the total
  refunded so far, so a repeated or a later partial refund takes only what is new), as far as
  the balance allows (kind ``purchase_refund``); what the balance cannot cover is recorded as
  owed on the purchase.
* Owed credits are collected when money next arrives for the account (:func:`grant_purchased`): a
  granted purchase (here, or ``pixelmill admin grant-credits --purchase``) first pays what the
  account owes, through the ledger (kind ``owed_collected``), in the grant's transaction.
  Operator grants that are not purchases and sign-up credits collect nothing.

Every handler takes the caller's session and never commits: the event row and its effect
commit together, or neither does."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from pixelmill.billing.stripe_checkout import CheckoutSession, StripeCheckout, VerifiedEvent
from pixelmill.config import CreditPack
from pixelmill.credits import ledger
from pixelmill.db.base import utcnow
from pixelmill.db.models import Purchase, StripeEvent
from pixelmill.db.session import Database
from pixelmill.errors import Conflict

log = logging.getLogger(__name__)

PAID_EVENTS = frozenset({"checkout.session.completed", "checkout.session.async_payment_succeeded"})
REFUND_EVENTS = frozenset({"charge.refunded"})
PAID_STATUSES = frozenset({"paid", "no_payment_required"})


@dataclass(frozen=True)
class Handled:
    """What one webhook delivery did: ``granted``, ``taken_back``, ``duplicate`` (this event
    was handled before), ``already_granted`` (another event about the same session was),
    ``awaiting_payment``, ``nothing_due``, ``unknown`` (no purchase of ours), ``mismatch``
    (the session's amount is not the purchase's: nothing granted) or ``ignored``."""

    outcome: str
    purchase_id: str | None = None
    credits: int = 0


def start_checkout(
    db: Database,
    checkout: StripeCheckout,
    user_id: int,
    pack: CreditPack,
    success_url: str,
    cancel_url: str,
) -> CheckoutSession:
    """Record the pending purchase (committed first: a session Stripe opens always has its
    purchase), open the Checkout Session (no transaction held across the call), then note the
    session's id. A refusal from Stripe marks the purchase ``failed`` and is a 502."""
    purchase_id = uuid.uuid4().hex
    with db.transaction() as session:
        session.add(
            Purchase(
                id=purchase_id,
                user_id=user_id,
                pack_id=pack.id,
                credits=pack.credits,
                price_cents=pack.price_cents,
                currency=pack.currency,
                status="pending",
            )
        )
    try:
        made = checkout.create_session(
            purchase_id=purchase_id,
            user_id=user_id,
            pack=pack,
            success_url=success_url,
            cancel_url=cancel_url,
        )
    except BaseException:
        with db.transaction() as session:
            session.execute(
                update(Purchase)
                .where(Purchase.id == purchase_id, Purchase.status == "pending")
                .values(status="failed")
            )
        raise
    with db.transaction() as session:
        session.execute(
            update(Purchase)
            .where(Purchase.id == purchase_id, Purchase.session_id.is_(None))
            .values(session_id=made.id)
        )
    return made


def handle_event(session: Session, event: VerifiedEvent) -> Handled:
    """Apply one verified Stripe event once. A second delivery of the same event id changes
    nothing; one racing the first is a 409 (Stripe delivers it again, and then it is a
    duplicate)."""
    if session.get(StripeEvent, event.id) is not None:
        return Handled("duplicate")
    session.add(StripeEvent(id=event.id, type=event.type[:64]))
    try:
        session.flush()
    except IntegrityError as exc:
        raise Conflict("This Stripe event is being handled now; deliver it again") from exc
    if event.type in PAID_EVENTS:
        handled = _paid(session, event.object)
    elif event.type in REFUND_EVENTS:
        handled = _refunded(session, event.object)
    else:
        handled = Handled("ignored")
    if handled.purchase_id is not None:
        session.execute(
            update(StripeEvent)
            .where(StripeEvent.id == event.id)
            .values(purchase_id=handled.purchase_id)
        )
    log.info("stripe event %s (%s): %s", event.id, event.type, handled.outcome)
    return handled


def _session_purchase(session: Session, obj: dict[str, Any]) -> Purchase | None:
    """The purchase a Checkout Session pays for: by our ``client_reference_id``, else by the
    session's id; a session id that contradicts the one recorded is not ours."""
    purchase = None
    reference = obj.get("client_reference_id")
    if isinstance(reference, str):
        purchase = session.get(Purchase, reference)
    session_id = obj.get("id")
    if purchase is None and isinstance(session_id, str):
        purchase = session.scalar(select(Purchase).where(Purchase.session_id == session_id))
    if purchase is not None and purchase.session_id not in (None, session_id):
        log.warning(
            "checkout session %s names purchase %s of another session", session_id, reference
        )
        return None
    return purchase


def _paid(session: Session, obj: dict[str, Any]) -> Handled:
    if obj.get("object") != "checkout.session":
        return Handled("ignored")
    purchase = _session_purchase(session, obj)
    if purchase is None:
        log.warning("checkout session %s matches no purchase", obj.get("id"))
        return Handled("unknown")
    if obj.get("payment_status") not in PAID_STATUSES:
        return Handled("awaiting_payment", purchase.id)
    amount = obj.get("amount_subtotal", obj.get("amount_total"))
    if amount != purchase.price_cents or str(obj.get("currency", "")).lower() != purchase.currency:
        log.error(
            "checkout session %s charged %s %s for purchase %s of %s %s: nothing granted",
            obj.get("id"),
            amount,
            obj.get("currency"),
            purchase.id,
            purchase.price_cents,
            purchase.currency,
        )
        return Handled("mismatch", purchase.id)
    intent = obj.get("payment_intent")
    won = session.execute(
        update(Purchase)
        .where(Purchase.id == purchase.id, Purchase.status.in_(("pending", "failed")))
        .values(
            status="paid",
            paid_at=utcnow(),
            session_id=obj.get("id"),
            payment_intent=intent if isinstance(intent, str) else None,
        )
        .returning(Purchase.user_id, Purchase.credits, Purchase.pack_id)
    ).first()
    if won is None:
        return Handled("already_granted", purchase.id)
    user_id, credits, pack_id = int(won[0]), int(won[1]), str(won[2])
    grant_purchased(
        session,
        user_id,
        credits,
        memo=f"pack {pack_id} (purchase {purchase.id})",
        source=f"purchase {purchase.id}",
    )
    return Handled("granted", purchase.id, credits)


def owed(session: Session, user_id: int) -> int:
    """The credits the account still owes for payments refunded after they were spent."""
    total = session.scalar(
        select(func.coalesce(func.sum(Purchase.owed_credits), 0)).where(
            Purchase.user_id == user_id, Purchase.owed_credits > 0
        )
    )
    return int(total or 0)


def grant_purchased(session: Session, user_id: int, credits: int, memo: str, source: str) -> int:
    """Grant ``credits`` bought (ledger kind ``purchase``), then take what the account owes (the
    ``owed_credits`` of its refunded purchases, oldest first) out of its balance, as far as the
    balance allows, in the caller's transaction (never commits). Each take is a ledger entry
    (kind ``owed_collected``, naming the refunded purchase and ``source``) and moves the
    credits from that purchase's ``owed_credits`` to its ``refunded_credits``, so a later
    refund of the same charge counts them once. The purchases that owe are locked before the
    account's row (as ``charge.refunded`` locks its purchase before taking credits back), so
    the two never wait on each other in opposite orders. Returns the credits collected."""
    owing = _owing(session, user_id)
    ledger.grant(session, user_id, credits, kind="purchase", memo=memo)
    return _collect(session, user_id, owing, source)


def _owing(session: Session, user_id: int) -> list[Purchase]:
    return list(
        session.scalars(
            select(Purchase)
            .where(Purchase.user_id == user_id, Purchase.owed_credits > 0)
            .order_by(Purchase.created_at, Purchase.id)
            .with_for_update()
            .execution_options(populate_existing=True)
        ).all()
    )


def _collect(session: Session, user_id: int, owing: list[Purchase], source: str) -> int:
    collected = 0
    for refunded in owing:
        memo = f"owed for refunded pack {refunded.pack_id} (purchase {refunded.id}), from {source}"
        taken = ledger.take_back(
            session, user_id, refunded.owed_credits, kind="owed_collected", memo=memo
        )
        if taken <= 0:
            break
        refunded.owed_credits -= taken
        refunded.refunded_credits += taken
        collected += taken
        log.info("purchase %s: %d owed credits collected from %s", refunded.id, taken, source)
    if collected:
        session.flush()
    return collected


def _charge_purchase(session: Session, obj: dict[str, Any]) -> Purchase | None:
    """The purchase a charge paid, by its payment intent (noted when the session completed),
    else by the purchase id the payment intent's metadata carries; its row locked."""
    intent = obj.get("payment_intent")
    query = None
    if isinstance(intent, str):
        query = select(Purchase).where(Purchase.payment_intent == intent)
    metadata = obj.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("purchase_id"), str):
        by_id = select(Purchase).where(Purchase.id == metadata["purchase_id"])
        if query is None or session.scalar(query) is None:
            query = by_id
    if query is None:
        return None
    return session.scalar(query.with_for_update())


def _refunded(session: Session, obj: dict[str, Any]) -> Handled:
    if obj.get("object") != "charge":
        return Handled("ignored")
    purchase = _charge_purchase(session, obj)
    if purchase is None:
        log.warning("refunded charge %s matches no purchase", obj.get("id"))
        return Handled("unknown")
    if purchase.status not in ("paid", "refunded"):
        return Handled("nothing_due", purchase.id)  # never granted: nothing to take back
    charged = int(obj.get("amount_captured") or obj.get("amount") or 0)
    refunded = min(int(obj.get("amount_refunded") or 0), charged)
    if charged <= 0 or refunded <= purchase.refunded_cents:
        return Handled("nothing_due", purchase.id)
    # The credits of the part refunded so far (all of them for a full refund), less what
    # earlier refunds of this charge already took back or recorded as owed.
    due_in_all = purchase.credits * refunded // charged
    due = due_in_all - purchase.refunded_credits - purchase.owed_credits
    taken = 0
    if due > 0:
        memo = f"pack {purchase.pack_id} refunded (purchase {purchase.id})"
        taken = ledger.take_back(session, purchase.user_id, due, kind="purchase_refund", memo=memo)
        purchase.refunded_credits += taken
        purchase.owed_credits += due - taken
    purchase.refunded_cents = refunded
    if refunded >= charged:
        purchase.status = "refunded"
    if due - taken > 0:
        log.warning(
            "purchase %s refunded: %d credits taken back, %d owed (spent already)",
            purchase.id,
            taken,
            due - taken,
        )
    return Handled("taken_back", purchase.id, taken)
