"""The v2 product library through HTTP: upload (derived category/description), list with
category filter, get, soft delete (kept for jobs), account scoping, avatars, image URLs."""

from __future__ import annotations

import io

from fastapi.testclient import TestClient
from PIL import Image

from pixelmill.resources import Resources
from tests.support.accounts import make_account
from tests.support.api import b64_png, upload_product, wait_terminal
from tests.support.credits import balance_of


def test_upload_derives_fields_and_is_free(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=5)
    product = upload_product(client, acct)
    assert set(product) >= {"uuid", "name", "category", "description", "image_url", "created_at"}
    assert product["name"] == "bottle"
    assert product["category"] == "other"
    # Measured from the image: the blue bottle on grey, its size.
    assert "blue" in product["description"] and "160x120" in product["description"]
    got = client.get(product["image_url"])
    assert got.status_code == 200
    assert Image.open(io.BytesIO(got.content)).size == (160, 120)
    assert balance_of(resources, acct.id) == 5

    named = upload_product(client, acct, name="Mug", category="Houseware", description="a mug")
    assert (named["name"], named["category"], named["description"]) == (
        "Mug",
        "houseware",
        "a mug",
    )


def test_list_filter_get_and_soft_delete(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=5)
    a = upload_product(client, acct, category="beauty")
    b = upload_product(client, acct, category="jewelry")
    listed = client.get("/api/v2/products", headers=acct.key_headers).json()
    assert {p["uuid"] for p in listed} == {a["uuid"], b["uuid"]}
    beauty = client.get("/api/v2/products?category=beauty", headers=acct.key_headers).json()
    assert [p["uuid"] for p in beauty] == [a["uuid"]]
    one = client.get(f"/api/v2/products/{a['uuid']}", headers=acct.key_headers).json()
    assert one["uuid"] == a["uuid"] and one["category"] == "beauty"

    # A job started before the delete still runs on the product.
    r = client.post(
        "/api/v2/generate/scenes",
        json={"product_uuid": a["uuid"], "num_scenes": 1},
        headers=acct.key_headers,
    )
    assert r.status_code == 202
    d = client.delete(f"/api/v2/products/{a['uuid']}", headers=acct.key_headers)
    assert d.status_code == 200 and d.json()["deleted"] is True
    assert client.get(f"/api/v2/products/{a['uuid']}", headers=acct.key_headers).status_code == 404
    listed = client.get("/api/v2/products", headers=acct.key_headers).json()
    assert [p["uuid"] for p in listed] == [b["uuid"]]
    again = client.delete(f"/api/v2/products/{a['uuid']}", headers=acct.key_headers)
    assert again.status_code == 404
    assert wait_terminal(client, acct, r.json()["job_id"])["status"] == "completed"
    # A deleted product cannot start new jobs.
    r = client.post(
        "/api/v2/generate/scenes",
        json={"product_uuid": a["uuid"], "num_scenes": 1},
        headers=acct.key_headers,
    )
    assert r.status_code == 404


def test_other_accounts_product_is_404(client: TestClient, resources: Resources) -> None:
    owner = make_account(resources, credits=5)
    other = make_account(resources, credits=5)
    p = upload_product(client, owner)
    assert client.get(f"/api/v2/products/{p['uuid']}", headers=other.key_headers).status_code == 404
    d = client.delete(f"/api/v2/products/{p['uuid']}", headers=other.key_headers)
    assert d.status_code == 404
    assert client.get("/api/v2/products", headers=other.key_headers).json() == []
    assert client.get("/api/v2/products/not-a-uuid", headers=owner.key_headers).status_code == 404


def test_bad_image_is_refused(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=5)
    r = client.post(
        "/api/v2/products",
        json={"image": "bm90IGFuIGltYWdl", "filename": "x.png"},
        headers=acct.key_headers,
    )
    assert 400 <= r.status_code < 500
    assert isinstance(r.json()["detail"], str)
    assert client.get("/api/v2/products", headers=acct.key_headers).json() == []
    unauth = client.post("/api/v2/products", json={"image": b64_png(), "filename": "a.png"})
    assert unauth.status_code == 401


def test_avatars_empty_and_unknown_is_404(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=1)
    assert client.get("/api/v2/avatars", headers=acct.key_headers).json() == []
    missing = "00000000-0000-4000-8000-000000000000"
    assert client.get(f"/api/v2/avatars/{missing}", headers=acct.key_headers).status_code == 404
