"""``product_text`` routed to an OpenAI-compatible server (``PIXELMILL_ROUTE_PRODUCT_TEXT``): a
storefront enrichment job's description, tags and alt text are written by the language model
(chat completions with the photo, JSON asked for and validated with a Pydantic model holding
exactly the asked fields), each field charged once as the catalog says; an answer that is not
that JSON falls back to the offline composition (said in the method) or, with
``fallback=error``, fails the fields with their credits released."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.providers.conftest import RoutedApp
from tests.providers.fakes import PRODUCT_COPY, serve
from tests.storefront.helpers import COLOURS, JOBS, SHOP, png, wait_job
from tests.support.accounts import Account, make_account
from tests.support.credits import consistent_balance

ROUTE = "openai:gpt-4o-mini"
KEY = "sk-test-product-text-0123456789"


def _job(client: TestClient, acct: Account, enrichments: list[str]) -> dict[str, Any]:
    image = base64.b64encode(png(COLOURS["blue"])).decode()
    r = client.post(
        JOBS,
        json={
            "shop_domain": SHOP,
            "products": [
                {
                    "id": "mug",
                    "title": "Blue Mug",
                    "description": "<p>Holds 350 ml.</p>",
                    "tags": ["kitchen"],
                    "image_base64": image,
                }
            ],
            "enrichments": enrichments,
        },
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    assert r.json()["credits_reserved"] == len(enrichments)
    job: dict[str, Any] = wait_job(client, acct, r.json()["job_id"])
    return job


def test_product_copy_written_by_the_language_model(routed_app: RoutedApp) -> None:
    with (
        serve("openai") as fake,
        routed_app(
            routes={"product_text": ROUTE},
            openai_base_url=f"{fake.url}/v1",
            openai_api_key=KEY,
            job_workers=1,
            analyze_products=False,
        ) as (client, res),
    ):
        acct = make_account(res, credits=10)
        job = _job(client, acct, ["description", "tags", "alt_text"])
        assert job["status"] == "completed", job
        (product,) = job["results"]
        assert product["description"] == PRODUCT_COPY["description"]
        # Whitespace normalised, a case-insensitive repeat dropped.
        assert product["tags"] == ["mug", "ginger cat", "blue", "ceramic"]
        assert product["alt_text"] == PRODUCT_COPY["alt_text"]
        assert product["method"].startswith(f"language model {ROUTE} (chat completions")
        assert "and its photo" in product["method"] and KEY not in json.dumps(job)
        assert job["credits_used"] == 3
        assert consistent_balance(res, acct.id) == 7

    # The three fields of one product: one call (the engine's result is shared per product).
    (seen,) = fake.seen
    assert (seen.method, seen.path) == ("POST", "/v1/chat/completions")
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.json["model"] == "gpt-4o-mini"
    assert seen.json["response_format"] == {"type": "json_object"}
    system, user = seen.json["messages"]
    schema = json.loads(system["content"].split("JSON schema: ", 1)[1].rstrip("."))
    assert sorted(schema["required"]) == ["alt_text", "description", "tags"]
    text, picture = user["content"]
    asked = json.loads(text["text"].split(": ", 1)[1])
    assert asked["title"] == "Blue Mug" and asked["tags"] == ["kitchen"]
    assert asked["description"] == "<p>Holds 350 ml.</p>"
    assert asked["write"] == ["description", "tags", "alt_text"]
    assert picture["image_url"]["url"].startswith("data:image/png;base64,")


def test_only_the_asked_fields_are_required(routed_app: RoutedApp) -> None:
    with (
        serve("openai") as fake,
        routed_app(
            routes={"product_text": ROUTE},
            openai_base_url=f"{fake.url}/v1",
            job_workers=1,
            analyze_products=False,
        ) as (client, res),
    ):
        acct = make_account(res, credits=10)
        job = _job(client, acct, ["tags"])
        assert job["status"] == "completed", job
        (product,) = job["results"]
        assert product["tags"] == ["mug", "ginger cat", "blue", "ceramic"]
        assert product.get("description") is None
        assert consistent_balance(res, acct.id) == 9
    schema = json.loads(
        fake.seen[0].json["messages"][0]["content"].split("JSON schema: ", 1)[1][:-1]
    )
    assert schema["required"] == ["tags"] and set(schema["properties"]) == {"tags"}


@pytest.mark.parametrize("fallback", ["offline", "error"])
def test_an_answer_that_is_not_the_json_asked_for(routed_app: RoutedApp, fallback: str) -> None:
    with (
        serve("openai") as fake,
        routed_app(
            routes={"product_text": ROUTE},
            openai_base_url=f"{fake.url}/v1",
            provider_fallback=fallback,
            job_workers=1,
            analyze_products=False,
        ) as (client, res),
    ):
        fake.mode = "garbage"
        acct = make_account(res, credits=10)
        job = _job(client, acct, ["description", "alt_text"])
        (product,) = job["results"]
        if fallback == "offline":
            assert job["status"] == "completed", job
            # The offline composition from the product's own words, and the method says so.
            assert product["description"].startswith("Blue Mug. Holds 350 ml.")
            assert "no language model" in product["method"]
            assert product["method"].endswith(f"(offline fallback: {ROUTE} failed)")
            assert job["credits_used"] == 2
            assert consistent_balance(res, acct.id) == 8
        else:
            assert job["status"] == "failed", job
            errors = {e["enrichment"]: e["error"] for e in product["errors"]}
            assert set(errors) == {"description", "alt_text"}
            assert all(f"product_text failed at its backend {ROUTE}" in e for e in errors.values())
            assert job["credits_used"] == 0
            assert consistent_balance(res, acct.id) == 10
    assert fake.paths() == ["POST /v1/chat/completions"]  # garbage is not retried
