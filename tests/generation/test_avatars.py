"""Avatars on the job machinery, through the real HTTP surface: guided and reference avatar
jobs complete, charge one credit per delivered avatar and save each to the library; bad input
is a 4xx with nothing charged; other accounts' jobs and avatars answer 404."""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np
from fastapi.testclient import TestClient
from PIL import Image
from skimage import data as skdata

from pixelmill.resources import Resources
from tests.support.accounts import Account, make_account
from tests.support.api import get_json, upload_product
from tests.support.credits import balance_of, held_reservations, ledger_consistent
from tests.support.waiting import wait_until

ASTRONAUT: np.ndarray = skdata.astronaut()  # type: ignore[no-untyped-call]


def _photo_b64(pixels: np.ndarray) -> str:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=92)
    return base64.b64encode(buf.getvalue()).decode()


def _wait_avatar_job(client: TestClient, acct: Account, job_id: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        body = get_json(client, acct, f"/api/v2/jobs/avatar/{job_id}")
        return body if body["status"] in ("completed", "failed") else None

    result: dict[str, Any] = wait_until(done, timeout=120, interval=0.2)
    return result


def test_guided_avatars_complete_and_join_the_library(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    r = client.post(
        "/api/v2/generate/avatar",
        json={"generation_type": "guided", "prompt": "a woman with red hair", "count": 2},
        headers=acct.key_headers,
    )
    assert r.status_code == 202, r.text
    created = r.json()
    assert created["credits_reserved"] == 2 and created["images_to_generate"] == 2
    assert created["poll_url"].endswith(f"/api/v2/jobs/avatar/{created['job_id']}")
    job = _wait_avatar_job(client, acct, created["job_id"])
    assert job["status"] == "completed", job
    assert job["generation_type"] == "guided" and job["credits_used"] == 2
    assert len(job["results"]) == 2 and len(job["avatars"]) == 2
    # The generic job route reads the same job.
    assert get_json(client, acct, f"/api/v2/jobs/{created['job_id']}")["type"] == "avatar"

    listed = client.get("/api/v2/avatars", headers=acct.key_headers).json()
    assert {a["uuid"] for a in listed} == {a["uuid"] for a in job["avatars"]}
    avatar = get_json(client, acct, f"/api/v2/avatars/{listed[0]['uuid']}")
    assert avatar["kind"] == "guided" and avatar["gender"] in ("female", "male", "unspecified")
    image = client.get(avatar["image_url"].removeprefix("http://testserver"))
    assert image.status_code == 200
    with Image.open(io.BytesIO(image.content)) as im:
        assert im.format == "PNG" and im.height > im.width  # a portrait canvas

    assert balance_of(resources, acct.id) == 8
    assert held_reservations(resources, acct.id) == 0
    assert ledger_consistent(resources, acct.id)

    other = make_account(resources, credits=10)
    assert (
        client.get(f"/api/v2/jobs/avatar/{created['job_id']}", headers=other.key_headers)
    ).status_code == 404
    assert (
        client.get(f"/api/v2/avatars/{avatar['uuid']}", headers=other.key_headers)
    ).status_code == 404
    assert client.get("/api/v2/avatars", headers=other.key_headers).json() == []


def test_avatar_requests_refused_before_any_charge(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    bad = [
        {"generation_type": "guided"},  # nothing to draw from
        {"generation_type": "guided", "prompt": "a man", "num_outputs": 31},
        {"generation_type": "reference"},  # no photo
        {"generation_type": "reference", "reference_image_base64": "not base64!"},
        {"generation_type": "selfie", "prompt": "x"},
    ]
    for body in bad:
        r = client.post("/api/v2/generate/avatar", json=body, headers=acct.key_headers)
        assert 400 <= r.status_code < 500, (body, r.text)
        assert r.json()["detail"]
    # A photo without a person: a clear 422 naming the problem.
    flat = np.full((240, 320, 3), (40, 160, 90), np.uint8)
    r = client.post(
        "/api/v2/generate/avatar",
        json={"generation_type": "reference", "reference_image_base64": _photo_b64(flat)},
        headers=acct.key_headers,
    )
    assert r.status_code == 422, r.text
    assert "person" in r.json()["detail"]
    assert balance_of(resources, acct.id) == 10
    assert held_reservations(resources, acct.id) == 0


def test_reference_avatar_from_a_person_photo(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=5)
    r = client.post(
        "/api/v2/generate/avatar",
        json={
            "generation_type": "reference",
            "reference_image_base64": _photo_b64(ASTRONAUT),
            "name": "Eileen",
        },
        headers=acct.key_headers,
    )
    assert r.status_code == 202, r.text
    job = _wait_avatar_job(client, acct, r.json()["job_id"])
    assert job["status"] == "completed", job
    [avatar] = job["avatars"]
    assert avatar["name"] == "Eileen" and avatar["kind"] == "reference"
    assert balance_of(resources, acct.id) == 4
    assert ledger_consistent(resources, acct.id)


def test_scene_job_is_not_an_avatar_job(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=10)
    product = upload_product(client, acct)
    r = client.post(
        "/api/v2/generate/scenes",
        json={"product_uuid": product["uuid"], "num_scenes": 1},
        headers=acct.key_headers,
    )
    assert r.status_code == 202
    job_id = r.json()["job_id"]
    assert client.get(f"/api/v2/jobs/avatar/{job_id}", headers=acct.key_headers).status_code == 404


def test_public_gallery_lists_models_with_images(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=1)
    listed = client.get("/api/v2/avatars/public", headers=acct.key_headers)
    assert listed.status_code == 200
    models = listed.json()
    assert len(models) >= 8 and len({m["id"] for m in models}) == len(models)
    first = models[0]
    image = client.get(first["image_url"].removeprefix("http://testserver"))  # no key needed
    assert image.status_code == 200 and image.headers["content-type"] == "image/png"
    again = client.get(first["image_url"].removeprefix("http://testserver"))
    assert again.content == image.content  # drawn once, then served from the store
    assert client.get("/api/v2/avatars/public/nobody.png").status_code == 404
    assert client.get("/api/v2/avatars/public").status_code == 401
    assert balance_of(resources, acct.id) == 1
