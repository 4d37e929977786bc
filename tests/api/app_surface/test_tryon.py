"""``/api/tryon`` with a login token: classify a product photo (free) and a synchronous try-on
on a public model or an own avatar (1 credit per image, charged once, a non-clothing product
refused before any charge); 401 without a token, another account's avatar a 404."""

from __future__ import annotations

import io

import cv2
import numpy as np
from fastapi.testclient import TestClient
from PIL import Image

from pixelmill.resources import Resources
from tests.support.accounts import Account, login, make_account
from tests.support.credits import balance_of
from tests.support.images import encode


def shirt_png() -> bytes:
    img = np.full((360, 360, 3), 255, np.uint8)
    outline = np.array(
        [[110, 50], [250, 50], [330, 120], [295, 155], [265, 130], [265, 330], [95, 330],
         [95, 130], [65, 155], [30, 120]],
        np.int32,
    )  # fmt: skip
    cv2.fillPoly(img, [outline], (200, 40, 40), lineType=cv2.LINE_AA)
    return encode(img, "PNG")


def _headers(client: TestClient, acct: Account) -> dict[str, str]:
    return {"Authorization": f"Bearer {login(client, acct.email, acct.password)}"}


def test_tryon_generate_on_a_public_model(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=5)
    headers = _headers(client, acct)
    model = client.get("/api/v2/avatars/public", headers=acct.key_headers).json()[0]["id"]
    r = client.post(
        "/api/tryon/generate",
        data={"model_id": model, "model_type": "public", "num_outputs": "2", "pose_key": "x"},
        files={"product_image": ("shirt.png", shirt_png(), "image/png")},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["success"] and body["credits_used"] == 2 and len(body["result_urls"]) == 2
    assert body["result_url"] == body["result_urls"][0]
    assert [x["model"] for x in body["results"]] == [model, model]
    assert body["details"]["unused_fields"] == ["pose_key"]
    image = client.get(body["result_url"].removeprefix("http://testserver"))
    with Image.open(io.BytesIO(image.content)) as im:
        assert im.format == "JPEG"
    assert balance_of(resources, acct.id) == 3


def test_tryon_refusals_cost_nothing(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=5)
    headers = _headers(client, acct)
    files = {"product_image": ("shirt.png", shirt_png(), "image/png")}
    form = {"model_id": "model_nobody", "model_type": "public"}
    assert client.post("/api/tryon/generate", data=form, files=files).status_code == 401
    r = client.post("/api/tryon/generate", data=form, files=files, headers=headers)
    assert r.status_code == 404, r.text
    public = client.get("/api/v2/avatars/public", headers=acct.key_headers).json()[0]["id"]
    r = client.post(
        "/api/tryon/generate",
        data={"model_id": public, "model_type": "public", "product_category": "food"},
        files=files,
        headers=headers,
    )
    assert r.status_code == 422 and "clothing" in r.json()["detail"], r.text
    r = client.post(
        "/api/tryon/generate",
        data={"model_id": public, "model_type": "public", "num_outputs": "5"},
        files=files,
        headers=headers,
    )
    assert r.status_code == 422, r.text
    r = client.post(
        "/api/tryon/generate",
        data={"model_id": "00000000-0000-4000-8000-000000000001", "model_type": "saved"},
        files=files,
        headers=headers,
    )
    assert r.status_code == 404, r.text
    assert balance_of(resources, acct.id) == 5


def test_classify_product_is_free(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=1)
    r = client.post(
        "/api/tryon/classify-product",
        files={"product_image": ("shirt.png", shirt_png(), "image/png")},
        headers=_headers(client, acct),
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["category"] == "clothing" and 0.5 <= body["confidence"] <= 0.8
    assert body["method"].startswith("outline:") and body["description"]
    assert balance_of(resources, acct.id) == 1
