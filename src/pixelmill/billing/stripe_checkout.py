"""The Stripe side of selling credit packs, through the official ``stripe`` library: creating a
Checkout Session for a pack, and verifying a webhook delivery's ``Stripe-Signature``.

Nothing here touches the database (``purchases.py`` does); the wiring builds one
:class:`StripeCheckout` when ``PIXELMILL_STRIPE_SECRET_KEY`` and
``PIXELMILL_STRIPE_WEBHOOK_SECRET`` are set (docs/billing.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import stripe

from pixelmill.config import CreditPack, Settings
from pixelmill.credits.pricing import credit_packs
from pixelmill.errors import AppError, InvalidInput

STRIPE_TIMEOUT_SECONDS = 20
"""One call to Stripe's API (the library retries twice on network errors)."""

SIGNATURE_TOLERANCE_SECONDS = stripe.Webhook.DEFAULT_TOLERANCE
"""How old a signed delivery may be (300 s, Stripe's default): an older one is a replay."""


class StripeUnavailable(AppError):
    """Stripe refused or could not be reached while a checkout was being started: 502."""

    status_code = 502
    code = "PAYMENT_PROVIDER_ERROR"


@dataclass(frozen=True)
class CheckoutSession:
    id: str
    url: str


@dataclass(frozen=True)
class VerifiedEvent:
    """A webhook delivery whose signature checked out: its event id, type and data object."""

    id: str
    type: str
    object: dict[str, Any]


class StripeCheckout:
    """The packs on sale and the Stripe client that sells them."""

    def __init__(
        self,
        secret_key: str,
        webhook_secret: str,
        api_base: str,
        packs: tuple[CreditPack, ...],
        http_client: stripe.HTTPClient | None = None,
    ) -> None:
        self.packs = packs
        self.webhook_secret = webhook_secret
        self.client = stripe.StripeClient(
            secret_key,
            base_addresses={"api": api_base.rstrip("/")},
            max_network_retries=2,
            http_client=http_client or stripe.RequestsClient(timeout=STRIPE_TIMEOUT_SECONDS),
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> StripeCheckout | None:
        """None when the server sells nothing (no Stripe keys)."""
        if settings.stripe_secret_key is None or settings.stripe_webhook_secret is None:
            return None
        packs = credit_packs(settings.credit_packs)
        return cls(
            settings.stripe_secret_key,
            settings.stripe_webhook_secret,
            settings.stripe_api_base,
            packs,
        )

    def pack(self, pack_id: str) -> CreditPack:
        for pack in self.packs:
            if pack.id == pack_id:
                return pack
        known = ", ".join(p.id for p in self.packs)
        raise InvalidInput(f"Unknown pack_id {pack_id!r}: the packs are {known}")

    def create_session(
        self,
        *,
        purchase_id: str,
        user_id: int,
        pack: CreditPack,
        success_url: str,
        cancel_url: str,
    ) -> CheckoutSession:
        """A Checkout Session selling one ``pack`` (mode ``payment``), tied to the purchase by
        ``client_reference_id`` and to the account and pack by its metadata (copied to the
        payment intent, so the charge is traceable in Stripe's dashboard too). The purchase id
        is the idempotency key: a retried call never opens a second session."""
        metadata = {
            "purchase_id": purchase_id,
            "account_id": str(user_id),
            "pack_id": pack.id,
            "credits": str(pack.credits),
        }
        params: dict[str, Any] = {
            "mode": "payment",
            "line_items": [
                {
                    "quantity": 1,
                    "price_data": {
                        "currency": pack.currency,
                        "unit_amount": pack.price_cents,
                        "product_data": {"name": f"{pack.credits:,} pixelmill credits"},
                    },
                }
            ],
            "success_url": success_url,
            "cancel_url": cancel_url,
            "client_reference_id": purchase_id,
            "metadata": metadata,
            "payment_intent_data": {"metadata": metadata},
        }
        try:
            made = self.client.v1.checkout.sessions.create(
                params,  # type: ignore[arg-type]
                {"idempotency_key": f"pixelmill-checkout-{purchase_id}"},
            )
        except stripe.StripeError as exc:
            raise StripeUnavailable(
                f"Stripe did not open a checkout: {exc.user_message or type(exc).__name__}"
            ) from exc
        if not made.id or not made.url:
            raise StripeUnavailable("Stripe answered without a checkout URL")
        return CheckoutSession(str(made.id), str(made.url))

    def verify(self, payload: bytes, signature: str | None) -> VerifiedEvent:
        """The delivery's event once the library has checked its ``Stripe-Signature`` (HMAC of
        ``t.payload`` with the endpoint's secret, ``t`` within the tolerance); a 400
        :class:`AppError` otherwise, before anything is read from it."""
        try:
            event = stripe.Webhook.construct_event(
                payload, signature or "", self.webhook_secret, SIGNATURE_TOLERANCE_SECONDS
            )
        except stripe.SignatureVerificationError as exc:
            raise AppError(f"Invalid Stripe signature: {exc.user_message or exc}") from exc
        except ValueError as exc:
            raise AppError("The webhook body is not a JSON event") from exc
        body = json.loads(payload)
        obj = body.get("data", {}).get("object") if isinstance(body, dict) else None
        if not isinstance(obj, dict) or not event.id or not event.type:
            raise AppError("The webhook body is not a Stripe event")
        return VerifiedEvent(str(event.id), str(event.type), obj)
