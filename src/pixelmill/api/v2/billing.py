"""Credit packs sold through Stripe Checkout (docs/billing.md): ``GET /api/v2/billing/packs``,
``POST /api/v2/billing/checkout`` and Stripe's webhook, ``POST
/api/v2/billing/stripe-webhook``. Without Stripe keys every one of them answers 404 (the
dashboard hides its "Buy credits" page on that)."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Request

from pixelmill.api.deps import LiveUser, Res
from pixelmill.billing.purchases import handle_event, start_checkout
from pixelmill.billing.schemas import CheckoutOut, CheckoutRequest, PackOut, Packs, WebhookAck
from pixelmill.billing.stripe_checkout import StripeCheckout
from pixelmill.errors import NotFound

router = APIRouter(prefix="/api/v2/billing", tags=["v2 billing"])


async def _billing(resources: Res) -> StripeCheckout:
    if resources.billing is None:
        raise NotFound("This server sells no credits (Stripe is not configured)")
    return resources.billing


Billing = Annotated[StripeCheckout, Depends(_billing)]


@router.get("/packs")
async def packs(billing: Billing) -> Packs:
    """The credit packs on sale (404 when this server sells none)."""
    return Packs(packs=[PackOut.model_validate(p.model_dump()) for p in billing.packs])


@router.post("/checkout")
async def checkout(
    body: CheckoutRequest, user: LiveUser, billing: Billing, resources: Res
) -> CheckoutOut:
    """Start buying a pack: records the pending purchase and opens a Stripe Checkout Session;
    send the buyer to ``checkout_url``. The credits arrive when Stripe reports the payment
    (the webhook), not before."""
    pack = billing.pack(body.pack_id)
    made = await asyncio.to_thread(
        start_checkout, resources.db, billing, user.id, pack, body.success_url, body.cancel_url
    )
    return CheckoutOut(checkout_url=made.url, session_id=made.id)


@router.post("/stripe-webhook")
async def stripe_webhook(
    request: Request,
    billing: Billing,
    resources: Res,
    stripe_signature: Annotated[str | None, Header(alias="Stripe-Signature")] = None,
) -> WebhookAck:
    """Stripe's deliveries (``checkout.session.completed``, ``charge.refunded``...), verified
    by their ``Stripe-Signature``: a bad or stale signature is a 400 and changes nothing; each
    event is applied once, whatever the number of deliveries."""
    event = billing.verify(await request.body(), stripe_signature)
    handled = await resources.db.transact(partial(handle_event, event=event))
    return WebhookAck(outcome=handled.outcome)
