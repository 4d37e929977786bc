"""Every charged response says what it took and what is left: ``X-Credits-Charged`` and
``X-Credits-Remaining`` on a synchronous call (v2, v1, ``/api/process``, the app surface's
JWT routes) and on a job's or a batch's create (its reservation); none on a free call or a
refused one; a 402 says what the call needs (``detail`` and ``X-Credits-Required``)."""

from __future__ import annotations

import base64

from fastapi.testclient import TestClient
from httpx import Response

from pixelmill.resources import Resources
from tests.support.accounts import login, make_account
from tests.support.api import b64_png, upload_product
from tests.support.credits import balance_of, consistent_balance
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
    assert r.headers["X-Credits-Required"] == "5" and r.headers["X-Credits-Remaining"] == "2"
    assert "X-Credits-Charged" not in r.headers
    assert consistent_balance(resources, acct.id) == 2

    # A synchronous call says the same before anything runs.
    broke = make_account(resources, credits=0)
    r = client.post("/api/v2/upscale", json={**_image(), "scale": 8}, headers=broke.key_headers)
    assert r.status_code == 402, r.text
    assert "needs 2" in r.json()["detail"] and "balance is 0" in r.json()["detail"]
    assert r.headers["X-Credits-Required"] == "2" and r.headers["X-Credits-Remaining"] == "0"
    assert consistent_balance(resources, broke.id) == 0


def test_every_charged_surface_carries_the_headers(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=20)

    def charged(r: Response, price: int) -> None:
        assert r.status_code in (200, 202), r.text
        balance = balance_of(resources, acct.id)
        assert r.headers["X-Credits-Charged"] == str(price)
        assert r.headers["X-Credits-Remaining"] == str(balance)

    files = {"file": ("image.png", png_bytes(96, 64))}
    charged(client.post("/api/v1/remove-background", files=files, headers=acct.key_headers), 1)
    r = client.post(
        "/api/process",
        data={"processing_type": "upscale", "scale": "2"},
        files={"image": ("p.png", png_bytes(40, 30))},
        headers=acct.key_headers,
    )
    charged(r, 1)
    r = client.post(
        "/api/v2/batches",
        json={"images": [{"id": "a", "image": b64_png()}], "images_per_product": 2},
        headers=acct.key_headers,
    )
    charged(r, 2)
    assert r.json()["credits_reserved"] == 2
    token = login(client, acct.email, acct.password)
    r = client.post(
        "/api/avatars/generate-guided",
        json={"prompt": "a woman with short red hair", "count": 2},
        headers={"Authorization": f"Bearer {token}"},
    )
    charged(r, r.json()["credits_used"])
    assert r.json()["credits_used"] > 0
