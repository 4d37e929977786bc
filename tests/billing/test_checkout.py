"""Credit packs through Stripe Checkout, with the real ``stripe`` library against a stand-in
for Stripe's API on 127.0.0.1 (tests/billing/fake_stripe.py), on SQLite and PostgreSQL: the
Checkout Session create call as Stripe receives it, webhook events signed as Stripe signs
them (twice delivered, badly signed, replayed late), refunds taken back as far as the balance
allows, and ``balance == sum(ledger)`` after every step."""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from pixelmill.app import create_app
from pixelmill.credits import ledger
from pixelmill.credits.pricing import DEFAULT_CREDIT_PACKS
from pixelmill.db.models import Purchase, StripeEvent
from pixelmill.resources import Resources, build_resources
from pixelmill.worker import wire
from tests.billing.fake_stripe import (
    SECRET_KEY,
    WEBHOOK_SECRET,
    FakeStripe,
    event,
    paid,
    refunded_charge,
    signature,
)
from tests.support.accounts import Account, make_account
from tests.support.credits import consistent_balance
from tests.support.servers import client_for, live_server
from tests.support.settings import make_settings

HOOK = "/api/v2/billing/stripe-webhook"
SUCCESS = "https://shop.example.com/paid?session={CHECKOUT_SESSION_ID}"
CANCEL = "https://shop.example.com/cancelled"


def checkout(client: TestClient, acct: Account, pack_id: str = "pack_100") -> dict[str, Any]:
    r = client.post(
        "/api/v2/billing/checkout",
        json={"pack_id": pack_id, "success_url": SUCCESS, "cancel_url": CANCEL},
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def deliver(client: TestClient, payload: bytes, sig: str | None = None) -> Any:
    headers = {"Content-Type": "application/json"}
    headers["Stripe-Signature"] = signature(payload) if sig is None else sig
    return client.post(HOOK, content=payload, headers=headers)


def purchase_of(resources: Resources, session_id: str) -> Purchase:
    with resources.db.read() as session:
        found = session.scalar(select(Purchase).where(Purchase.session_id == session_id))
        assert found is not None
        return found


def events_handled(resources: Resources) -> int:
    with resources.db.read() as session:
        return int(session.scalar(select(func.count()).select_from(StripeEvent)) or 0)


def total_purchased(resources: Resources, user_id: int) -> int:
    with resources.db.read() as session:
        return ledger.total_purchased(session, user_id)


def test_packs_and_the_checkout_session_stripe_receives(
    client: TestClient, resources: Resources, stripe_api: FakeStripe
) -> None:
    packs = client.get("/api/v2/billing/packs")
    assert packs.status_code == 200
    assert [p["id"] for p in packs.json()["packs"]] == ["pack_100", "pack_500", "pack_2000"]
    starter = packs.json()["packs"][0]
    assert starter == {"id": "pack_100", "credits": 100, "price_cents": 900, "currency": "usd"}

    acct = make_account(resources, credits=5)
    made = checkout(client, acct)
    assert made["checkout_url"].startswith("https://checkout.stripe.com/c/pay/cs_test_")
    assert made["session_id"] in stripe_api.sessions

    [call] = stripe_api.calls
    assert call.path == "/v1/checkout/sessions"
    assert call.headers["authorization"] == f"Bearer {SECRET_KEY}"
    assert call.headers["content-type"] == "application/x-www-form-urlencoded"
    assert call.headers["idempotency-key"].startswith("pixelmill-checkout-")
    purchase = purchase_of(resources, made["session_id"])
    assert purchase.status == "pending" and purchase.user_id == acct.id
    form = call.form
    assert form["mode"] == "payment"
    assert form["line_items[0][quantity]"] == "1"
    assert form["line_items[0][price_data][currency]"] == "usd"
    assert form["line_items[0][price_data][unit_amount]"] == "900"
    assert form["line_items[0][price_data][product_data][name]"] == "100 pixelmill credits"
    assert form["success_url"] == SUCCESS
    assert form["cancel_url"] == CANCEL
    assert form["client_reference_id"] == purchase.id
    assert form["metadata[account_id]"] == str(acct.id)
    assert form["metadata[pack_id]"] == "pack_100"
    assert form["metadata[purchase_id]"] == purchase.id
    assert form["payment_intent_data[metadata][purchase_id]"] == purchase.id
    assert consistent_balance(resources, acct.id) == 5  # nothing granted before payment

    bad = client.post(
        "/api/v2/billing/checkout",
        json={"pack_id": "huge", "success_url": SUCCESS, "cancel_url": CANCEL},
        headers=acct.key_headers,
    )
    assert bad.status_code == 422 and "pack_100" in bad.json()["detail"]
    relative = client.post(
        "/api/v2/billing/checkout",
        json={"pack_id": "pack_100", "success_url": "/paid", "cancel_url": CANCEL},
        headers=acct.key_headers,
    )
    assert relative.status_code == 422
    anonymous = client.post(
        "/api/v2/billing/checkout",
        json={"pack_id": "pack_100", "success_url": SUCCESS, "cancel_url": CANCEL},
    )
    assert anonymous.status_code == 401
    assert len(stripe_api.calls) == 1


def test_stripe_refusing_the_checkout_is_a_502_and_the_purchase_failed(
    client: TestClient, resources: Resources, stripe_api: FakeStripe
) -> None:
    acct = make_account(resources, credits=0)
    stripe_api.fail_with = 400
    r = client.post(
        "/api/v2/billing/checkout",
        json={"pack_id": "pack_500", "success_url": SUCCESS, "cancel_url": CANCEL},
        headers=acct.key_headers,
    )
    assert r.status_code == 502, r.text
    assert "Stripe" in r.json()["detail"]
    with resources.db.read() as session:
        statuses = session.scalars(select(Purchase.status).where(Purchase.user_id == acct.id))
        assert list(statuses) == ["failed"]
    assert consistent_balance(resources, acct.id) == 0


@pytest.mark.both_databases
def test_a_completed_session_delivered_twice_grants_once(
    client: TestClient, resources: Resources, stripe_api: FakeStripe
) -> None:
    acct = make_account(resources, credits=5)
    made = checkout(client, acct, "pack_500")
    session_obj = paid(stripe_api.sessions[made["session_id"]], "pi_" + uuid.uuid4().hex[:24])
    payload = event("checkout.session.completed", session_obj)

    first = deliver(client, payload)
    assert first.status_code == 200, first.text
    assert first.json() == {"received": True, "outcome": "granted"}
    assert consistent_balance(resources, acct.id) == 505
    again = deliver(client, payload)  # Stripe's retry of the same event
    assert again.status_code == 200
    assert again.json()["outcome"] == "duplicate"
    # Another event about the same session (e.g. async_payment_succeeded) grants nothing.
    other = deliver(client, event("checkout.session.async_payment_succeeded", session_obj))
    assert other.json()["outcome"] == "already_granted"
    assert consistent_balance(resources, acct.id) == 505
    assert total_purchased(resources, acct.id) == 500
    account = client.get("/api/v2/account", headers=acct.key_headers).json()
    assert account["credits"] == 505 and account["total_purchased"] == 500
    purchase = purchase_of(resources, made["session_id"])
    assert purchase.status == "paid"
    assert purchase.payment_intent == session_obj["payment_intent"]


def test_an_unpaid_session_waits_and_an_amount_mismatch_grants_nothing(
    client: TestClient, resources: Resources, stripe_api: FakeStripe
) -> None:
    acct = make_account(resources, credits=1)
    made = checkout(client, acct)
    opened = stripe_api.sessions[made["session_id"]]
    waiting = {**opened, "status": "complete", "payment_status": "unpaid"}
    assert deliver(client, event("checkout.session.completed", waiting)).json()["outcome"] == (
        "awaiting_payment"
    )
    cheaper = {**paid(opened, "pi_cheap"), "amount_subtotal": 100, "amount_total": 100}
    assert deliver(client, event("checkout.session.completed", cheaper)).json()["outcome"] == (
        "mismatch"
    )
    assert consistent_balance(resources, acct.id) == 1
    late = deliver(client, event("checkout.session.async_payment_succeeded", paid(opened, "pi_1")))
    assert late.json()["outcome"] == "granted"
    assert consistent_balance(resources, acct.id) == 101


def test_bad_or_stale_signatures_change_nothing(
    client: TestClient, resources: Resources, stripe_api: FakeStripe
) -> None:
    acct = make_account(resources, credits=2)
    made = checkout(client, acct)
    payload = event(
        "checkout.session.completed", paid(stripe_api.sessions[made["session_id"]], "pi_x")
    )
    handled_before = events_handled(resources)
    refusals = {
        "wrong secret": deliver(client, payload, signature(payload, secret="whsec_" + "z" * 32)),
        "no header": client.post(HOOK, content=payload),
        "garbage header": deliver(client, payload, "v1=deadbeef"),
        "tampered body": deliver(
            client, payload.replace(b'"livemode": false', b'"livemode": true'), signature(payload)
        ),
        # A replay: signed correctly, but 10 minutes ago (the tolerance is 5).
        "stale": deliver(client, payload, signature(payload, at=int(time.time()) - 600)),
    }
    for why, r in refusals.items():
        assert r.status_code == 400, (why, r.status_code, r.text)
        assert "signature" in r.json()["detail"].lower(), why
    assert consistent_balance(resources, acct.id) == 2
    assert events_handled(resources) == handled_before
    assert purchase_of(resources, made["session_id"]).status == "pending"
    # The same event, signed now with the right secret, is applied: nothing above marked it.
    ok = deliver(client, payload)
    assert ok.json()["outcome"] == "granted"
    assert consistent_balance(resources, acct.id) == 102


@pytest.mark.both_databases
def test_a_refund_takes_the_credits_back_as_far_as_the_balance_allows(
    client: TestClient, resources: Resources, stripe_api: FakeStripe
) -> None:
    acct = make_account(resources, credits=5)
    made = checkout(client, acct)
    intent = "pi_" + uuid.uuid4().hex[:24]
    granted = deliver(
        client,
        event("checkout.session.completed", paid(stripe_api.sessions[made["session_id"]], intent)),
    )
    assert granted.json()["outcome"] == "granted"
    assert consistent_balance(resources, acct.id) == 105
    # 60 credits spent on work (a reservation captured through the ledger).
    with resources.db.transaction() as session:
        held = ledger.reserve(session, acct.id, 60, "sync:edit")
        ledger.settle(session, held.id, 60, "edit")
    assert consistent_balance(resources, acct.id) == 45

    # A quarter refunded: 25 credits back, the balance covers them.
    quarter = event("charge.refunded", refunded_charge(intent, 900, 225))
    assert deliver(client, quarter).json()["outcome"] == "taken_back"
    assert consistent_balance(resources, acct.id) == 20
    assert deliver(client, quarter).json()["outcome"] == "duplicate"
    assert consistent_balance(resources, acct.id) == 20

    # Then the rest: 75 more are due, 20 are left; the other 55 are owed.
    full = refunded_charge(intent, 900, 900)
    assert deliver(client, event("charge.refunded", full)).json()["outcome"] == "taken_back"
    assert consistent_balance(resources, acct.id) == 0
    # The same refund reported by another event: nothing more is due.
    assert deliver(client, event("charge.refunded", full)).json()["outcome"] == "nothing_due"
    assert consistent_balance(resources, acct.id) == 0
    purchase = purchase_of(resources, made["session_id"])
    assert (purchase.status, purchase.refunded_cents) == ("refunded", 900)
    assert (purchase.refunded_credits, purchase.owed_credits) == (45, 55)
    with resources.db.read() as session:
        assert ledger.total_purchased(session, acct.id) == 100  # what was bought


def buy(client: TestClient, stripe_api: FakeStripe, acct: Account, pack_id: str) -> str:
    """A checkout paid and its completion delivered: the payment intent."""
    made = checkout(client, acct, pack_id)
    intent = "pi_" + uuid.uuid4().hex[:24]
    done = event(
        "checkout.session.completed", paid(stripe_api.sessions[made["session_id"]], intent)
    )
    assert deliver(client, done).json()["outcome"] == "granted"
    return intent


def spend(resources: Resources, user_id: int, credits: int) -> None:
    with resources.db.transaction() as session:
        held = ledger.reserve(session, user_id, credits, "sync:edit")
        ledger.settle(session, held.id, credits, "edit")


def owed_and_refunded(resources: Resources, intent: str) -> tuple[int, int]:
    with resources.db.read() as session:
        found = session.scalar(select(Purchase).where(Purchase.payment_intent == intent))
        assert found is not None
        return found.owed_credits, found.refunded_credits


@pytest.mark.both_databases
def test_owed_credits_are_collected_from_the_next_purchases(
    client: TestClient, resources: Resources, stripe_api: FakeStripe
) -> None:
    """A pack spent and then refunded leaves credits owed; the next packs bought pay them
    first, through the ledger, oldest debt first, as far as each arrival allows; a plain
    grant collects nothing; history lists each collection; ``balance == sum(ledger)``."""
    acct = make_account(resources, credits=0)
    first = buy(client, stripe_api, acct, "pack_500")
    spend(resources, acct.id, 480)
    refund = event("charge.refunded", refunded_charge(first, 3900, 3900))
    assert deliver(client, refund).json()["outcome"] == "taken_back"
    assert consistent_balance(resources, acct.id) == 0
    assert owed_and_refunded(resources, first) == (480, 20)

    # An operator's grant (not money) is left alone.
    with resources.db.transaction() as session:
        ledger.grant(session, acct.id, 7, kind="grant", memo="goodwill")
    assert consistent_balance(resources, acct.id) == 7

    # 100 credits arrive: 107 in the balance, all of it goes to the debt.
    buy(client, stripe_api, acct, "pack_100")
    assert consistent_balance(resources, acct.id) == 0
    assert owed_and_refunded(resources, first) == (373, 127)

    # 2000 arrive: the remaining 373 are taken, the rest stays.
    third = buy(client, stripe_api, acct, "pack_2000")
    assert consistent_balance(resources, acct.id) == 2000 - 373
    assert owed_and_refunded(resources, first) == (0, 500)
    assert owed_and_refunded(resources, third) == (0, 0)
    with resources.db.read() as session:
        assert ledger.total_purchased(session, acct.id) == 2600  # what was bought

    # A later refund report about the first charge finds nothing more due.
    again = event("charge.refunded", refunded_charge(first, 3900, 3900))
    assert deliver(client, again).json()["outcome"] == "nothing_due"
    assert consistent_balance(resources, acct.id) == 1627

    history = client.get(
        "/api/v2/account/history", params={"limit": 100}, headers=acct.key_headers
    ).json()["items"]
    collected = [i for i in history if i["kind"] == "owed_collected"]
    assert [i["credits"] for i in collected] == [-373, -107]  # newest first
    assert all(i["credits_used"] == 0 for i in collected)
    assert "owed credits collected" in collected[0]["description"]
    assert "pack_500" in collected[0]["description"]
    # The ledger entries add up to the balance with the 480 spent (a reservation settled
    # directly here, so no call's history row lists it).
    assert sum(i["credits"] for i in history) - 480 == 1627
    kinds = [i["kind"] for i in history]
    assert kinds.count("purchase") == 3 and kinds.count("purchase_refund") == 1

    # Collections are not usage: the usage report counts the 480 spent on work only.
    today = date.today()
    usage = client.get(
        "/api/v2/usage",
        params={"from": str(today - timedelta(days=1)), "to": str(today + timedelta(days=1))},
        headers=acct.key_headers,
    )
    assert usage.status_code == 200, usage.text
    assert usage.json()["total_credits"] == 480


@pytest.mark.both_databases
def test_a_duplicate_completion_collects_nothing_twice(
    client: TestClient, resources: Resources, stripe_api: FakeStripe
) -> None:
    acct = make_account(resources, credits=0)
    first = buy(client, stripe_api, acct, "pack_100")
    spend(resources, acct.id, 100)
    assert deliver(client, event("charge.refunded", refunded_charge(first, 900, 900))).json()[
        "outcome"
    ] == ("taken_back")
    assert owed_and_refunded(resources, first) == (100, 0)
    made = checkout(client, acct, "pack_500")
    done = paid(stripe_api.sessions[made["session_id"]], "pi_dup")
    payload = event("checkout.session.completed", done)
    assert deliver(client, payload).json()["outcome"] == "granted"
    assert deliver(client, payload).json()["outcome"] == "duplicate"
    other = deliver(client, event("checkout.session.completed", done))
    assert other.json()["outcome"] == "already_granted"
    assert consistent_balance(resources, acct.id) == 400
    assert owed_and_refunded(resources, first) == (0, 100)


def test_events_of_no_purchase_of_ours_change_nothing(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=3)
    stranger = {
        "id": "cs_test_elsewhere",
        "object": "checkout.session",
        "payment_status": "paid",
        "amount_subtotal": 900,
        "currency": "usd",
        "client_reference_id": "not-ours",
    }
    assert deliver(client, event("checkout.session.completed", stranger)).json()["outcome"] == (
        "unknown"
    )
    refund = event("charge.refunded", refunded_charge("pi_unknown", 900, 900))
    assert deliver(client, refund).json()["outcome"] == "unknown"
    other = deliver(client, event("customer.created", {"id": "cus_1", "object": "customer"}))
    assert other.json()["outcome"] == "ignored"
    assert consistent_balance(resources, acct.id) == 3


def test_without_stripe_settings_billing_answers_404(database_url: str, tmp_path: Path) -> None:
    settings = make_settings(database_url, tmp_path / "plain")
    assert settings.stripe_secret_key is None
    resources = wire(build_resources(settings))
    try:
        with client_for(create_app(settings, resources)) as client:
            acct = make_account(resources, credits=1)
            assert client.get("/api/v2/billing/packs").status_code == 404
            body = {"pack_id": "pack_100", "success_url": SUCCESS, "cancel_url": CANCEL}
            r = client.post("/api/v2/billing/checkout", json=body, headers=acct.key_headers)
            assert r.status_code == 404
            payload = event("checkout.session.completed", {"object": "checkout.session"})
            assert deliver(client, payload).status_code == 404
    finally:
        resources.close()


def test_packs_come_from_the_setting(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    packs = '[{"id": "mini", "credits": 20, "price_cents": 250, "currency": "eur"}]'
    monkeypatch.setenv("PIXELMILL_CREDIT_PACKS", packs)
    keys = {"stripe_secret_key": SECRET_KEY, "stripe_webhook_secret": WEBHOOK_SECRET}
    settings = make_settings(database_url, tmp_path / "packs", **keys)
    assert settings.credit_packs is not None
    assert [(p.id, p.credits, p.price_cents, p.currency) for p in settings.credit_packs] == [
        ("mini", 20, 250, "eur")
    ]
    monkeypatch.setenv("PIXELMILL_CREDIT_PACKS", packs.replace("mini", "Mini Pack"))
    with pytest.raises(ValueError, match="id"):
        make_settings(database_url, tmp_path / "packs", **keys)
    # Stripe's amount rules: yen are whole (any amount), dinars end in 0, krónur are hundredths.
    fine = (
        '[{"id": "yen", "credits": 20, "price_cents": 1201, "currency": "jpy"},'
        ' {"id": "kwd", "credits": 20, "price_cents": 5120, "currency": "kwd"},'
        ' {"id": "isk", "credits": 20, "price_cents": 150000, "currency": "isk"}]'
    )
    monkeypatch.setenv("PIXELMILL_CREDIT_PACKS", fine)
    assert len(make_settings(database_url, tmp_path / "packs", **keys).credit_packs or []) == 3
    for bad in (
        '"price_cents": 5125, "currency": "kwd"',
        '"price_cents": 150050, "currency": "isk"',
    ):
        monkeypatch.setenv("PIXELMILL_CREDIT_PACKS", f'[{{"id": "x", "credits": 1, {bad}}}]')
        with pytest.raises(ValueError, match="multiples of"):
            make_settings(database_url, tmp_path / "packs", **keys)
    monkeypatch.delenv("PIXELMILL_CREDIT_PACKS")
    with pytest.raises(ValueError, match="go together"):
        make_settings(database_url, tmp_path / "packs", stripe_secret_key=SECRET_KEY)


def published_packs(client: TestClient) -> list[dict[str, Any]]:
    r = client.get("/api/credits/pricing")
    assert r.status_code == 200, r.text
    packs: list[dict[str, Any]] = r.json()["credit_packs"]
    return packs


def test_the_price_list_publishes_the_packs_on_sale(client: TestClient) -> None:
    """With ``PIXELMILL_CREDIT_PACKS`` unset, what Stripe sells (the default packs) is what
    ``GET /api/credits/pricing`` shows, in the shape the dashboard reads."""
    sold = client.get("/api/v2/billing/packs").json()["packs"]
    assert [(p["id"], p["credits"], p["price_cents"]) for p in sold] == [
        (p.id, p.credits, p.price_cents) for p in DEFAULT_CREDIT_PACKS
    ]
    published = published_packs(client)
    assert published[0] == {
        "id": "pack_100",
        "credits": 100,
        "price_usd": 9.0,
        "price_cents": 900,
        "currency": "usd",
    }
    assert [{k: p[k] for k in ("id", "credits", "price_cents", "currency")} for p in published] == (
        sold
    )


def test_the_price_list_follows_the_setting(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stripe_api: FakeStripe
) -> None:
    """An operator's ``PIXELMILL_CREDIT_PACKS`` replaces the default packs everywhere: the
    price list, the billing packs, and what a checkout sells; also on a server that sells
    nothing through Stripe (its packs are granted by the operator)."""
    packs = (
        '[{"id": "mini", "credits": 20, "price_cents": 250, "currency": "usd"},'
        ' {"id": "euro", "credits": 300, "price_cents": 2400, "currency": "eur"}]'
    )
    monkeypatch.setenv("PIXELMILL_CREDIT_PACKS", packs)
    keys = {
        "stripe_secret_key": SECRET_KEY,
        "stripe_webhook_secret": WEBHOOK_SECRET,
        "stripe_api_base": stripe_api.url,
    }
    for name, settings in (
        ("selling", make_settings(database_url, tmp_path / "selling", **keys)),
        ("plain", make_settings(database_url, tmp_path / "plain")),
    ):
        resources = wire(build_resources(settings))
        try:
            with client_for(create_app(settings, resources)) as client:
                assert published_packs(client) == [
                    {
                        "id": "mini",
                        "credits": 20,
                        "price_usd": 2.5,
                        "price_cents": 250,
                        "currency": "usd",
                    },
                    {
                        "id": "euro",
                        "credits": 300,
                        "price_usd": None,
                        "price_cents": 2400,
                        "currency": "eur",
                    },
                ], name
                if name == "plain":
                    continue
                sold = client.get("/api/v2/billing/packs").json()["packs"]
                assert [p["id"] for p in sold] == ["mini", "euro"]
                acct = make_account(resources, credits=0)
                checkout(client, acct, "euro")
                form = stripe_api.calls[-1].form
                assert form["line_items[0][price_data][unit_amount]"] == "2400"
                assert form["line_items[0][price_data][currency]"] == "eur"
                bad = client.post(
                    "/api/v2/billing/checkout",
                    json={"pack_id": "pack_100", "success_url": SUCCESS, "cancel_url": CANCEL},
                    headers=acct.key_headers,
                )
                assert bad.status_code == 422 and "mini, euro" in bad.json()["detail"]
        finally:
            resources.close()


@pytest.mark.both_databases
def test_deliveries_racing_each_other_grant_once(
    app: FastAPI, resources: Resources, stripe_api: FakeStripe
) -> None:
    """Eight deliveries at once over real HTTP: the same event four times, and four other
    events about the same session. One grants; the others are duplicates, already granted,
    or a 409 that Stripe would deliver again (and then be a duplicate)."""
    acct = make_account(resources, credits=0)
    with live_server(app) as base, httpx.Client(base_url=base, timeout=30) as http:
        r = http.post(
            "/api/v2/billing/checkout",
            json={"pack_id": "pack_500", "success_url": SUCCESS, "cancel_url": CANCEL},
            headers=acct.key_headers,
        )
        assert r.status_code == 200, r.text
        done = paid(stripe_api.sessions[r.json()["session_id"]], "pi_race")
        same = event("checkout.session.completed", done)
        payloads = [same] * 4 + [event("checkout.session.completed", done) for _ in range(4)]

        def post(payload: bytes) -> tuple[int, str]:
            sent = http.post(
                HOOK,
                content=payload,
                headers={
                    "Stripe-Signature": signature(payload),
                    "Content-Type": "application/json",
                },
            )
            return sent.status_code, sent.json().get(
                "outcome", ""
            ) if sent.status_code == 200 else ""

        with ThreadPoolExecutor(max_workers=8) as pool:
            answers = list(pool.map(post, payloads))
        assert [a for a in answers if a == (200, "granted")] == [(200, "granted")], answers
        assert all(
            a in ((200, "duplicate"), (200, "already_granted"), (409, ""))
            for a in answers
            if a != (200, "granted")
        ), answers
        # Stripe retries what was not a 2xx: every retry is now a duplicate.
        again = [post(p) for p, a in zip(payloads, answers, strict=True) if a[0] != 200]
        assert all(a == (200, "duplicate") for a in again), again
    assert consistent_balance(resources, acct.id) == 500
    assert total_purchased(resources, acct.id) == 500


def test_a_zero_decimal_currency_is_priced_in_its_own_units(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stripe_api: FakeStripe
) -> None:
    """A pack in yen (a zero-decimal currency at Stripe): ``price_cents`` is yen, not
    hundredths of a yen, everywhere: the price list (no ``price_usd``), what Stripe Checkout is
    asked for (``unit_amount`` 1200 is ¥1,200) and the amount a paid session must carry."""
    packs = (
        '[{"id": "yen", "credits": 100, "price_cents": 1200, "currency": "jpy"},'
        ' {"id": "won", "credits": 500, "price_cents": 15000, "currency": "krw"}]'
    )
    monkeypatch.setenv("PIXELMILL_CREDIT_PACKS", packs)
    keys = {
        "stripe_secret_key": SECRET_KEY,
        "stripe_webhook_secret": WEBHOOK_SECRET,
        "stripe_api_base": stripe_api.url,
    }
    settings = make_settings(database_url, tmp_path / "yen", **keys)
    resources = wire(build_resources(settings))
    try:
        with client_for(create_app(settings, resources)) as client:
            assert published_packs(client)[0] == {
                "id": "yen",
                "credits": 100,
                "price_usd": None,
                "price_cents": 1200,
                "currency": "jpy",
            }
            acct = make_account(resources, credits=0)
            made = checkout(client, acct, "yen")
            form = stripe_api.calls[-1].form
            assert form["line_items[0][price_data][unit_amount]"] == "1200"
            assert form["line_items[0][price_data][currency]"] == "jpy"
            assert purchase_of(resources, made["session_id"]).price_cents == 1200

            # Stripe reports the yen it took; a session paid in hundredths would not match.
            session = stripe_api.sessions[made["session_id"]]
            wrong = {**paid(session, "pi_yen_0"), "amount_total": 120_000}
            wrong["amount_subtotal"] = 120_000
            r = deliver(client, event("checkout.session.completed", wrong))
            assert r.status_code == 200 and r.json()["outcome"] != "granted", r.text
            assert consistent_balance(resources, acct.id) == 0
            r = deliver(client, event("checkout.session.completed", paid(session, "pi_yen")))
            assert r.status_code == 200 and r.json()["outcome"] == "granted", r.text
            assert consistent_balance(resources, acct.id) == 100
    finally:
        resources.close()
