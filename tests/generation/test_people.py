"""Product photos with an avatar and virtual try-on, through the real HTTP surface: jobs on a
saved product and avatar complete with one image per output, one credit captured per
delivered image; a non-clothing try-on, another account's avatar and bad counts are 4xx with
nothing charged."""

from __future__ import annotations

import base64
import io
from typing import Any

import cv2
import numpy as np
from fastapi.testclient import TestClient
from PIL import Image

from pixelmill.resources import Resources
from tests.support.accounts import Account, make_account
from tests.support.api import get_json, wait_terminal
from tests.support.credits import balance_of, held_reservations, ledger_consistent
from tests.support.images import encode
from tests.support.servers import serve_bytes
from tests.support.waiting import wait_until


def _png_b64(pixels: np.ndarray) -> str:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def tshirt() -> np.ndarray:
    """A red T-shirt with a white stripe on a white background."""
    img = np.full((400, 400, 3), 255, np.uint8)
    body = np.array(
        [
            [120, 60],
            [280, 60],
            [360, 130],
            [320, 170],
            [290, 140],
            [290, 360],
            [110, 360],
            [110, 140],
            [80, 170],
            [40, 130],
        ],
        np.int32,
    )
    cv2.fillPoly(img, [body], (200, 30, 40), lineType=cv2.LINE_AA)
    cv2.rectangle(img, (112, 220), (288, 240), (250, 250, 250), -1)
    return img


def bottle() -> np.ndarray:
    img = np.full((400, 300, 3), 255, np.uint8)
    cv2.rectangle(img, (110, 120), (190, 360), (40, 110, 200), -1)
    cv2.rectangle(img, (135, 60), (165, 120), (40, 110, 200), -1)
    return img


def _product(client: TestClient, acct: Account, pixels: np.ndarray, category: str) -> str:
    r = client.post(
        "/api/v2/products",
        json={"image": _png_b64(pixels), "filename": f"{category}.png", "category": category},
        headers=acct.key_headers,
    )
    assert r.status_code == 201, r.text
    return str(r.json()["uuid"])


def _avatar(client: TestClient, acct: Account) -> str:
    r = client.post(
        "/api/v2/generate/avatar",
        json={"prompt": "a woman with short black hair, white t-shirt, jeans"},
        headers=acct.key_headers,
    )
    assert r.status_code == 202, r.text
    job_id = r.json()["job_id"]

    def done() -> dict[str, Any] | None:
        body = get_json(client, acct, f"/api/v2/jobs/avatar/{job_id}")
        return body if body["status"] in ("completed", "failed") else None

    job: dict[str, Any] = wait_until(done, timeout=120, interval=0.2)
    assert job["status"] == "completed", job
    return str(job["avatars"][0]["uuid"])


def _start(client: TestClient, acct: Account, path: str, **body: Any) -> Any:
    return client.post(f"/api/v2/generate/{path}", json=body, headers=acct.key_headers)


def test_product_photo_and_tryon_jobs_complete(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=20)
    avatar = _avatar(client, acct)
    shirt = _product(client, acct, tshirt(), "clothing")
    before = balance_of(resources, acct.id)

    r = _start(
        client,
        acct,
        "product-photo",
        avatar_uuid=avatar,
        product_uuid=shirt,
        num_outputs=2,
        prompt="on the beach",
    )
    assert r.status_code == 202, r.text
    assert r.json()["credits_reserved"] == 2 and r.json()["product_uuid"] == shirt
    photo = wait_terminal(client, acct, r.json()["job_id"], timeout=180)
    assert photo["status"] == "completed", photo
    assert photo["type"] == "product_photo" and len(photo["results"]) == 2

    r = _start(client, acct, "tryon", avatar_uuid=avatar, product_uuid=shirt, num_outputs=1)
    assert r.status_code == 202, r.text
    tryon = wait_terminal(client, acct, r.json()["job_id"], timeout=180)
    assert tryon["status"] == "completed", tryon
    assert len(tryon["results"]) == 1 and tryon["credits_used"] == 1
    image = client.get(tryon["results"][0]["url"].removeprefix("http://testserver"))
    assert image.status_code == 200 and image.headers["content-type"] == "image/jpeg"

    assert balance_of(resources, acct.id) == before - 3
    assert held_reservations(resources, acct.id) == 0
    assert ledger_consistent(resources, acct.id)


def test_people_jobs_refused_before_any_charge(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=20)
    avatar = _avatar(client, acct)
    food = _product(client, acct, bottle(), "food")
    shirt = _product(client, acct, tshirt(), "clothing")
    before = balance_of(resources, acct.id)

    r = _start(client, acct, "tryon", avatar_uuid=avatar, product_uuid=food, num_outputs=1)
    assert r.status_code == 422 and "clothing" in r.json()["detail"], r.text
    r = _start(client, acct, "product-photo", avatar_uuid=avatar, product_uuid=food, num_outputs=31)
    assert r.status_code == 422, r.text

    other = make_account(resources, credits=20)
    theirs = _product(client, other, tshirt(), "clothing")
    r = _start(client, other, "tryon", avatar_uuid=avatar, product_uuid=theirs, num_outputs=1)
    assert r.status_code == 404 and "Avatar" in r.json()["detail"], r.text
    r = _start(client, acct, "tryon", avatar_uuid=avatar, product_uuid=theirs, num_outputs=1)
    assert r.status_code == 404 and "Product" in r.json()["detail"], r.text
    r = _start(client, acct, "product-photo", avatar_uuid="nope", product_uuid=shirt)
    assert r.status_code == 404, r.text

    assert balance_of(resources, acct.id) == before
    assert balance_of(resources, other.id) == 20
    assert held_reservations(resources, acct.id) == 0


def _job(client: TestClient, acct: Account, **body: Any) -> Any:
    payload = {"product_image": _png_b64(tshirt()), "images_to_generate": 1, **body}
    return client.post("/api/v2/jobs", json=payload, headers=acct.key_headers)


def test_jobs_with_a_model(client: TestClient, resources: Resources) -> None:
    from skimage import data as skdata

    acct = make_account(resources, credits=20)
    public = client.get("/api/v2/avatars/public", headers=acct.key_headers).json()[0]["id"]
    r = _job(client, acct, model_id=public, category="clothing", custom_prompt="studio")
    assert r.status_code == 202, r.text
    tryon = wait_terminal(client, acct, r.json()["job_id"], timeout=180)
    assert tryon["status"] == "completed" and tryon["type"] == "tryon", tryon

    own = _avatar(client, acct)
    r = _job(client, acct, model_id=own, category="food", custom_prompt="kitchen zorblax")
    assert r.status_code == 202, r.text
    assert "zorblax" in r.json()["warnings"][0] and "kitchen" not in r.json()["warnings"][0]
    photo = wait_terminal(client, acct, r.json()["job_id"], timeout=180)
    assert photo["status"] == "completed" and photo["type"] == "product_photo", photo
    assert "zorblax" in photo["warnings"][0]  # pollers see it too
    assert tryon["warnings"] is None  # "studio" is a word the engines use

    person = encode(skdata.astronaut(), "JPEG", quality=90)  # type: ignore[no-untyped-call]
    with serve_bytes({"/people/eileen.jpg": (200, "image/jpeg", person)}) as base:
        r = _job(client, acct, model_url=base + "/people/eileen.jpg", category="accessories")
    assert r.status_code == 202, r.text
    assert wait_terminal(client, acct, r.json()["job_id"], timeout=180)["status"] == "completed"

    r = _job(client, acct, custom_prompt="on a beach")  # no model: a scene job, said so
    assert r.status_code == 202 and "custom_prompt" in r.json()["warnings"][0], r.text
    wait_terminal(client, acct, r.json()["job_id"], timeout=180)
    assert held_reservations(resources, acct.id) == 0
    assert ledger_consistent(resources, acct.id)


def test_jobs_model_refusals_cost_nothing(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=5)
    flat = encode(np.full((200, 300, 3), (30, 140, 60), np.uint8), "PNG")
    with serve_bytes({"/flat.png": (200, "image/png", flat)}) as base:
        r = _job(client, acct, model_url=base + "/flat.png")
    assert r.status_code == 422 and "person" in r.json()["detail"], r.text
    r = _job(client, acct, model_id="00000000-0000-4000-8000-000000000009")
    assert r.status_code == 404, r.text
    r = _job(client, acct, model_id="model_nobody")
    assert r.status_code == 404, r.text
    r = _job(client, acct, model_id="x", model_url="http://example.com/a.jpg")
    assert r.status_code == 422, r.text
    r = _job(client, acct, images_to_generate=6)  # 6 credits, 5 held: 402
    assert r.status_code == 402, r.text
    assert balance_of(resources, acct.id) == 5
    # Nothing the refused requests uploaded is kept.
    inputs = resources.settings.data_dir / "library" / "inputs"
    assert not inputs.exists() or not any(inputs.iterdir())
