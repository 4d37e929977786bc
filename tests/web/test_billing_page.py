"""The dashboard's "Buy credits" page in headless Chromium: hidden on a server without Stripe
settings (the packs endpoint answers 404), shown with them; choosing a pack opens a Stripe
Checkout Session (the stand-in for Stripe's API on 127.0.0.1 receives it) and sends the
browser to Stripe's page; once the signed webhook arrives, the history lists the purchase."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from pixelmill.app import create_app
from pixelmill.config import CreditPack
from pixelmill.resources import build_resources
from pixelmill.worker import wire
from tests.billing.fake_stripe import (
    SECRET_KEY,
    WEBHOOK_SECRET,
    FakeStripe,
    event,
    fake_stripe,
    paid,
    signature,
)
from tests.support.servers import live_server
from tests.support.services import IN_CI
from tests.support.settings import job_settings
from tests.web.conftest import Live, Tab
from tests.web.test_dashboard import check_accessible, sign_up

try:
    from playwright.sync_api import Route, expect
except ImportError:  # pragma: no cover - a missing dev dependency
    if IN_CI:
        raise
    pytest.skip("Playwright is not installed (requirements/dev.txt)", allow_module_level=True)

STRIPE_PAGE = "https://checkout.stripe.com/"


@dataclass
class Selling:
    base_url: str
    stripe: FakeStripe


@contextmanager
def _selling(database_url: str, data_dir: Path, **overrides: object) -> Iterator[Selling]:
    """A second live server, this one with Stripe settings (its API: the stand-in)."""
    with fake_stripe() as stripe_api:
        settings = job_settings(
            database_url,
            data_dir,
            stripe_secret_key=SECRET_KEY,
            stripe_webhook_secret=WEBHOOK_SECRET,
            stripe_api_base=stripe_api.url,
            **overrides,
        )
        resources = wire(build_resources(settings))
        try:
            with live_server(create_app(settings, resources)) as base_url:
                yield Selling(base_url, stripe_api)
        finally:
            resources.close()


@pytest.fixture(scope="module")
def selling(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Selling]:
    with _selling(database_url, tmp_path_factory.mktemp("web-billing")) as server:
        yield server


YEN_PACKS = [
    CreditPack(id="yen", credits=100, price_cents=1200, currency="jpy"),
    CreditPack(id="won", credits=500, price_cents=15000, currency="krw"),
]


@pytest.fixture(scope="module")
def selling_yen(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Selling]:
    """A server selling packs in zero-decimal currencies (yen and won)."""
    data_dir = tmp_path_factory.mktemp("web-billing-yen")
    with _selling(database_url, data_dir, credit_packs=YEN_PACKS) as server:
        yield server


def test_buy_credits_is_hidden_without_stripe(tab: Tab, live: Live) -> None:
    page = tab.page
    sign_up(tab)
    expect(page.get_by_role("link", name="History", exact=True)).to_be_visible()
    page.wait_for_load_state("networkidle")  # the packs probe has answered (404)
    expect(page.get_by_role("link", name="Buy credits", exact=True)).to_be_hidden()
    expect(page.get_by_text("Packs are granted by your operator")).to_be_visible()
    expect(page.get_by_role("link", name="Buy credits →")).to_have_count(0)
    assert httpx.get(f"{live.base_url}/api/v2/billing/packs", timeout=10).status_code == 404
    tab.open("/buy")
    expect(page.get_by_text("This server does not sell credits")).to_be_visible()
    expect(page.get_by_role("button", name="Buy 100 credits")).to_have_count(0)
    tab.shot("hidden")


def test_buy_credits_through_stripe_checkout(tab: Tab, selling: Selling) -> None:
    tab.base_url = selling.base_url
    page = tab.page
    sign_up(tab)
    link = page.get_by_role("link", name="Buy credits", exact=True)
    expect(link).to_be_visible()
    expect(page.get_by_role("link", name="Buy credits →")).to_be_visible()  # the overview's
    # The overview's packs are the ones on sale (GET /api/credits/pricing), in their currency.
    packs = page.locator(".pack")
    expect(packs).to_have_count(3)
    expect(packs.nth(0)).to_contain_text(re.compile(r"9[.,]00 · \S*0[.,]09\S* each"))
    expect(packs.nth(1)).to_contain_text(re.compile(r"39[.,]00 · \S*0[.,]078\S* each"))
    link.click()
    expect(page.get_by_role("heading", name="Buy credits", exact=True)).to_be_visible()
    expect(page.locator(".buy-pack")).to_have_count(3)
    expect(page.get_by_role("button", name="Buy 500 credits")).to_be_visible()
    check_accessible(page)
    tab.shot("packs")

    def stripe_page(route: Route) -> None:  # Stripe's hosted page, not reachable from here
        route.fulfill(status=200, content_type="text/html", body="<h1>Stripe Checkout</h1>")

    page.route(f"{STRIPE_PAGE}**", stripe_page)
    calls_before = len(selling.stripe.calls)
    page.get_by_role("button", name="Buy 100 credits").click()
    page.wait_for_url(f"{STRIPE_PAGE}c/pay/cs_test_*")
    [call] = selling.stripe.calls[calls_before:]
    assert call.form["line_items[0][price_data][unit_amount]"] == "900"
    assert call.form["success_url"] == f"{selling.base_url}/app/#/buy/paid"
    assert call.form["cancel_url"] == f"{selling.base_url}/app/#/buy/cancelled"
    session_id = page.url.split("/c/pay/")[1].split("#")[0]

    # Stripe tells the server, then sends the browser back.
    payload = event("checkout.session.completed", paid(selling.stripe.sessions[session_id], "pi_w"))
    r = httpx.post(
        f"{selling.base_url}/api/v2/billing/stripe-webhook",
        content=payload,
        headers={"Stripe-Signature": signature(payload), "Content-Type": "application/json"},
        timeout=10,
    )
    assert r.json()["outcome"] == "granted"
    tab.open("/buy/paid")
    expect(page.get_by_text("your payment went through")).to_be_visible()
    expect(page.locator(".credits-pill")).to_have_text("110 credits")
    page.get_by_role("link", name="History", exact=True).click()
    purchase = page.locator("tr[data-kind=purchase]")
    expect(purchase).to_have_count(1)
    expect(purchase).to_contain_text("+100")
    expect(page.locator("tr[data-kind=signup]")).to_contain_text("+10")
    tab.shot("history")


def test_zero_decimal_currencies_are_shown_in_their_own_units(
    tab: Tab, selling_yen: Selling
) -> None:
    """``price_cents`` is the currency's smallest unit as Stripe counts it: for yen and won
    that is the yen and the won, so 1200 is ¥1,200 (not ¥12) and no decimals are shown."""
    tab.base_url = selling_yen.base_url
    page = tab.page
    sign_up(tab)
    formatted = page.evaluate(
        """async () => {
            const { money } = await import("/app/assets/ui.js");
            const cases = [[1200, "jpy"], [12, "jpy", 3], [15000, "krw"], [900, "usd"],
                           [9, "usd", 3], [5120, "kwd"], [10000, "isk"], [2400, "eur"]];
            return cases.map(([amount, code, d]) => money(amount, code, d));
        }"""
    )
    expected = page.evaluate(
        """() => {
            const f = (code, n, d) => new Intl.NumberFormat(undefined,
                { style: "currency", currency: code, ...(d === undefined ? {} :
                  { maximumFractionDigits: d }) }).format(n);
            return [f("JPY", 1200), f("JPY", 12, 3), f("KRW", 15000), f("USD", 9),
                    f("USD", 0.09, 3), f("KWD", 5.12), f("ISK", 100), f("EUR", 24)];
        }"""
    )
    assert formatted == expected
    assert re.fullmatch(r"\D*1\D?200\D*", expected[0]), expected  # ¥1,200: no decimals
    assert re.fullmatch(r"\D*5[.,]120\D*", expected[5]), expected  # three decimals

    packs = page.locator(".pack")
    expect(packs).to_have_count(2)
    expect(packs.nth(0)).to_contain_text(f"{expected[0]} · {expected[1]} each")
    expect(packs.nth(1)).to_contain_text(re.compile(r"15\D?000 · \D*30 each"))
    page.get_by_role("link", name="Buy credits", exact=True).click()
    expect(page.locator(".buy-pack")).to_have_count(2)
    expect(page.locator(".buy-pack .pack-price").nth(0)).to_have_text(expected[0])
    check_accessible(page)
    tab.shot("yen-packs")

    def stripe_page(route: Route) -> None:
        route.fulfill(status=200, content_type="text/html", body="<h1>Stripe Checkout</h1>")

    page.route(f"{STRIPE_PAGE}**", stripe_page)
    page.get_by_role("button", name="Buy 100 credits").click()
    page.wait_for_url(f"{STRIPE_PAGE}c/pay/cs_test_*")
    form = selling_yen.stripe.calls[-1].form
    assert form["line_items[0][price_data][unit_amount]"] == "1200"
    assert form["line_items[0][price_data][currency]"] == "jpy"
