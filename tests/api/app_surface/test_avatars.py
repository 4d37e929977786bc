"""``/api/avatars`` studio generators with a login token: guided and reference avatars come
back as image URLs, 1 credit each; a photo without a person and bad counts cost nothing."""

from __future__ import annotations

import base64

import numpy as np
from fastapi.testclient import TestClient
from skimage import data as skdata

from pixelmill.resources import Resources
from tests.support.accounts import login, make_account
from tests.support.credits import balance_of
from tests.support.images import encode

ASTRONAUT: np.ndarray = skdata.astronaut()  # type: ignore[no-untyped-call]


def test_studio_generators(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=6)
    headers = {"Authorization": f"Bearer {login(client, acct.email, acct.password)}"}
    r = client.post(
        "/api/avatars/generate-guided",
        json={"prompt": "an older man with a grey beard, green sweater", "count": 2},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["success"] and body["credits_used"] == 2 and len(body["images"]) == 2
    png = client.get(body["images"][0].removeprefix("http://testserver"))
    assert png.status_code == 200 and png.content[:4] == b"\x89PNG"

    photo = base64.b64encode(encode(ASTRONAUT, "JPEG", quality=90)).decode()
    r = client.post(
        "/api/avatars/generate-from-reference",
        json={"reference_image": photo, "count": 1},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    assert r.json()["credits_used"] == 1
    assert balance_of(resources, acct.id) == 3

    flat = base64.b64encode(encode(np.full((200, 300, 3), 90, np.uint8), "PNG")).decode()
    r = client.post(
        "/api/avatars/generate-from-reference",
        json={"reference_image": flat, "count": 1},
        headers=headers,
    )
    assert r.status_code == 422 and "person" in r.json()["detail"], r.text
    r = client.post(
        "/api/avatars/generate-guided", json={"prompt": "x", "count": 31}, headers=headers
    )
    assert r.status_code == 422
    r = client.post("/api/avatars/generate-guided", json={"prompt": "a woman", "count": 1})
    assert r.status_code == 401
    assert balance_of(resources, acct.id) == 3
