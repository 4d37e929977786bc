"""The other generation entry points: scenes-from-url (fetch through the SSRF guard, save the
product, start the job; default 4 scenes) and the avatar-based calls (a clear 4xx, no charge)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from pixelmill.resources import Resources
from tests.support.accounts import make_account
from tests.support.api import upload_product, wait_terminal
from tests.support.credits import balance_of
from tests.support.images import png_bytes
from tests.support.servers import serve_bytes


def test_scenes_from_url_saves_product_and_runs(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=10)
    with serve_bytes({"/shop/bottle.png": (200, "image/png", png_bytes(200, 150))}) as base:
        r = client.post(
            "/api/v2/generate/scenes-from-url",
            json={"image_url": base + "/shop/bottle.png"},
            headers=acct.key_headers,
        )
    assert r.status_code == 202, r.text
    created = r.json()
    assert created["credits_reserved"] == 4 and created["job_id"] and created["poll_url"]
    products = client.get("/api/v2/products", headers=acct.key_headers).json()
    assert [p["uuid"] for p in products] == [created["product_uuid"]]
    assert products[0]["name"] == "bottle" and products[0]["filename"] == "bottle.png"
    job = wait_terminal(client, acct, created["job_id"])
    assert job["status"] == "completed" and len(job["results"]) == 4
    assert balance_of(resources, acct.id) == 6


def test_scenes_from_url_refuses_private_addresses(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    r = client.post(
        "/api/v2/generate/scenes-from-url",
        json={"image_url": "http://169.254.169.254/latest/meta-data", "num_scenes": 2},
        headers=acct.key_headers,
    )
    assert r.status_code == 400
    assert client.get("/api/v2/products", headers=acct.key_headers).json() == []
    assert balance_of(resources, acct.id) == 10


def test_avatar_photo_calls_answer_404_without_charge(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    product = upload_product(client, acct)
    for path in ("/api/v2/generate/product-photo", "/api/v2/generate/tryon"):
        r = client.post(
            path,
            json={
                "avatar_uuid": "00000000-0000-4000-8000-000000000001",
                "product_uuid": product["uuid"],
                "num_outputs": 2,
            },
            headers=acct.key_headers,
        )
        assert r.status_code == 404 and "Avatar" in r.json()["detail"]
    assert balance_of(resources, acct.id) == 10
