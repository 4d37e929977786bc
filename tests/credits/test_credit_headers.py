"""Every charged response says what it took and what is left: ``X-Credits-Charged`` and
``X-Credits-Remaining`` on a synchronous call (v1 and v2) and on a job's create (its
reservation); none on a free call or a refused one; a 402 says what the call needs."""

from __future__ import annotations

import base64

from fastapi.testclient import TestClient

from pixelmill.resources import Resources
from tests.support.accounts import make_account
from tests.support.api import upload_product
from tests.support.credits import consistent_balance
from tests.support.images import png_bytes


def _image() -> dict[str, str]:
    return {"image_base64": base64.b64encode(png_bytes(96, 64)).decode()}


def test_charged_calls_carry_the_credit_headers(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=10)
    r = client.post("/api/v2/remove-background", json=_image(), headers=acct.key_headers)
    assert r.status_code == 200, r.text
    assert r.headers["X-Credits-Charged"] == str(r.json()["credits_used"]) == "1"
    assert r.headers["X-Credits-Remaining"] == str(r.json()["credits_remaining"]) == "9"

    product = upload_product(client, acct)
    r = client.post(
        "/api/v2/generate/scenes",
        json={"product_uuid": product["uuid"], "num_scenes": 3},
        headers=acct.key_headers,
    )
    assert r.status_code == 202, r.text
    assert r.headers["X-Credits-Charged"] == "3" == str(r.json()["credits_reserved"])
    assert r.headers["X-Credits-Remaining"] == "6" == str(r.json()["credits_remaining"])

    free = client.get("/api/v2/account", headers=acct.key_headers)
    assert free.status_code == 200 and "X-Credits-Charged" not in free.headers
    bad = client.post(
        "/api/v2/remove-background", json={"image_base64": "nope"}, headers=acct.key_headers
    )
    assert bad.status_code in (400, 415, 422) and "X-Credits-Charged" not in bad.headers


def test_a_402_says_what_the_call_needs(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=2)
    product = upload_product(client, acct)
    r = client.post(
        "/api/v2/generate/scenes",
        json={"product_uuid": product["uuid"], "num_scenes": 5},
        headers=acct.key_headers,
    )
    assert r.status_code == 402, r.text
    assert "needs 5" in r.json()["detail"] and "balance is 2" in r.json()["detail"]
    assert "X-Credits-Charged" not in r.headers
    assert consistent_balance(resources, acct.id) == 2
