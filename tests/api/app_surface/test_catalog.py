"""``/api/catalog`` with a login token: the account's products under integer ids, filtered
and paged; ``create-silo`` makes N silhouette shots for N credits; another account's product
is a 404; an image with no product costs nothing."""

from __future__ import annotations

import base64
import io

import numpy as np
from fastapi.testclient import TestClient
from PIL import Image

from pixelmill.credits import ledger
from pixelmill.resources import Resources
from tests.support.accounts import login, make_account
from tests.support.credits import balance_of
from tests.support.images import encode


def _mug() -> bytes:
    """A dark mug-like block on a light table top: a product U²-Net-p finds."""
    img = np.full((480, 480, 3), 225, np.uint8)
    img[140:380, 160:330] = (150, 40, 40)
    img[200:300, 330:370] = (150, 40, 40)
    return encode(img, "PNG")


def test_catalog_and_silos(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=10)
    other = make_account(resources, credits=5)
    jwt = {"Authorization": f"Bearer {login(client, acct.email, acct.password)}"}
    other_jwt = {"Authorization": f"Bearer {login(client, other.email, other.password)}"}
    image = base64.b64encode(_mug()).decode()
    made = []
    for name, brand, status, coll in [
        ("Red mug", "Acme", "active", 7),
        ("Blue mug", "Acme", "draft", 7),
        ("Teapot", "Potter & Co", "active", None),
    ]:
        r = client.post(
            "/api/v2/products",
            json={
                "image": image,
                "name": name,
                "category": "houseware",
                "description": f"{name} in stoneware",
                "brand": brand,
                "status": status,
                "collection_id": coll,
            },
            headers=acct.key_headers,
        )
        assert r.status_code == 201, r.text
        made.append(r.json())
    assert made[0]["brand"] == "Acme" and made[0]["collection_id"] == 7

    page = client.get("/api/catalog?page_size=2", headers=jwt).json()
    assert page["total"] == 3 and page["pages"] == 2 and len(page["items"]) == 2
    assert [i["name"] for i in page["items"]] == ["Teapot", "Blue mug"]  # newest first
    assert (
        client.get("/api/catalog?page=2&page_size=2", headers=jwt).json()["items"][0]["name"]
        == "Red mug"
    )
    assert client.get("/api/catalog?brand=acme", headers=jwt).json()["total"] == 2
    assert client.get("/api/catalog?status=draft", headers=jwt).json()["total"] == 1
    assert client.get("/api/catalog?collection_id=7", headers=jwt).json()["total"] == 2
    assert client.get("/api/catalog?search=TEA", headers=jwt).json()["total"] == 1
    assert client.get("/api/catalog?search=%25", headers=jwt).json()["total"] == 0
    assert client.get("/api/catalog?page_size=101", headers=jwt).status_code == 422
    assert client.get("/api/catalog", headers=other_jwt).json()["total"] == 0
    assert client.get("/api/catalog").status_code == 401

    teapot = page["items"][0]
    assert isinstance(teapot["id"], int) and teapot["uuid"] == made[2]["uuid"]
    r = client.post(f"/api/catalog/{teapot['id']}/create-silo", json={"num_images": 3}, headers=jwt)
    assert r.status_code == 200, r.text
    silo = r.json()
    assert silo["credits_used"] == 3 and len(silo["images"]) == 3
    assert silo["results"][0]["label"] == "white"
    assert balance_of(resources, acct.id) == 7
    shot = client.get(silo["images"][1].removeprefix("http://testserver"))
    assert shot.status_code == 200
    pixels = np.asarray(Image.open(io.BytesIO(shot.content)).convert("RGB"))
    assert pixels.shape[:2] == (1600, 1600)
    corners = pixels[[0, 0, -1, -1], [0, -1, 0, -1]].astype(int)
    assert (corners >= 250).all()  # a white ground

    r = client.post(
        f"/api/catalog/{teapot['id']}/create-silo", json={"num_images": 1}, headers=other_jwt
    )
    assert r.status_code == 404
    r = client.post(
        f"/api/catalog/{teapot['id']}/create-silo", json={"num_images": 13}, headers=jwt
    )
    assert r.status_code == 422
    with resources.db.read() as session:
        for user_id in (acct.id, other.id):
            assert ledger.balance(session, user_id) == ledger.ledger_sum(session, user_id)
    assert balance_of(resources, other.id) == 5
