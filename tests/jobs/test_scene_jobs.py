"""Scene jobs end to end on the in-process queue: reserve, run scene by scene, capture per
result, release the rest, fresh signed URLs; another account's job is a 404."""

from __future__ import annotations

import io

import pytest
from fastapi.testclient import TestClient
from PIL import Image

from pixelmill.resources import Resources
from tests.support.accounts import make_account
from tests.support.api import b64_png, upload_product, wait_terminal
from tests.support.credits import balance_of, held_reservations, ledger_consistent
from tests.support.waiting import drain_jobs, wait_until


def test_scene_job_completes_with_results_and_charges_per_scene(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    product = upload_product(client, acct)
    r = client.post(
        "/api/v2/generate/scenes",
        json={"product_uuid": product["uuid"], "num_scenes": 3},
        headers=acct.key_headers,
    )
    assert r.status_code == 202, r.text
    created = r.json()
    assert created["status"] in ("pending", "queued", "processing")
    assert created["credits_reserved"] == 3
    assert created["credits_remaining"] == 7
    assert created["poll_url"].endswith(f"/api/v2/jobs/{created['job_id']}")

    job = wait_terminal(client, acct, created["job_id"])
    assert job["status"] == "completed", job
    assert job["credits_used"] == 3
    assert job["progress"] == {"completed": 3, "failed": 0, "total": 3}
    assert len(job["results"]) == 3
    assert len({res["scene"] for res in job["results"]}) == 3
    for res in job["results"]:
        got = client.get(res["url"])
        assert got.status_code == 200
        img = Image.open(io.BytesIO(got.content))
        assert img.size == (256, 256)
    assert job["started_at"] and job["completed_at"] and job["created_at"]
    assert balance_of(resources, acct.id) == 7
    assert held_reservations(resources, acct.id) == 0
    assert ledger_consistent(resources, acct.id)

    listed = client.get("/api/v2/jobs?limit=10", headers=acct.key_headers).json()
    assert [j["job_id"] for j in listed] == [created["job_id"]]
    assert listed[0]["credits_used"] == 3 and listed[0]["status"] == "completed"
    assert client.get("/api/v2/jobs?status_filter=failed", headers=acct.key_headers).json() == []


@pytest.mark.both_databases
def test_job_with_no_product_in_image_fails_and_refunds(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    # A flat grey picture: no subject to cut out.
    import base64

    import numpy as np

    from tests.support.images import encode

    flat = base64.b64encode(encode(np.full((120, 160, 3), 128, np.uint8))).decode()
    r = client.post(
        "/api/v2/jobs",
        json={"product_image": flat, "images_to_generate": 4},
        headers=acct.key_headers,
    )
    assert r.status_code == 202, r.text
    assert balance_of(resources, acct.id) == 6
    job = wait_terminal(client, acct, r.json()["job_id"])
    assert job["status"] == "failed"
    assert job["error"]
    assert job["credits_used"] == 0 and job["results"] == []
    assert balance_of(resources, acct.id) == 10
    assert held_reservations(resources, acct.id) == 0
    assert ledger_consistent(resources, acct.id)


def test_jobs_endpoint_creates_scene_job_and_refuses_unknown_models(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    r = client.post(
        "/api/v2/jobs",
        json={"product_image": b64_png(), "model_id": "m1", "images_to_generate": 2},
        headers=acct.key_headers,
    )
    assert r.status_code == 404
    assert "model_id" in r.json()["detail"]
    r = client.post(
        "/api/v2/jobs",
        json={"product_image": b64_png(), "images_to_generate": 2, "category": "beauty"},
        headers=acct.key_headers,
    )
    assert r.status_code == 202
    job = wait_terminal(client, acct, r.json()["job_id"])
    assert job["status"] == "completed" and len(job["results"]) == 2
    assert balance_of(resources, acct.id) == 8
    # The uploaded input is not a library product: it is deleted once the job is done.
    inputs = resources.settings.data_dir / "library" / "inputs"
    wait_until(lambda: not any(inputs.iterdir()), timeout=10)


@pytest.mark.both_databases
def test_insufficient_credits_is_402_and_creates_nothing(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=2)
    product = upload_product(client, acct)
    r = client.post(
        "/api/v2/generate/scenes",
        json={"product_uuid": product["uuid"], "num_scenes": 3},
        headers=acct.key_headers,
    )
    assert r.status_code == 402
    assert isinstance(r.json()["detail"], str)
    assert client.get("/api/v2/jobs", headers=acct.key_headers).json() == []
    assert balance_of(resources, acct.id) == 2


def test_other_accounts_job_is_404(client: TestClient, resources: Resources) -> None:
    owner = make_account(resources, credits=10)
    other = make_account(resources, credits=10)
    product = upload_product(client, owner)
    r = client.post(
        "/api/v2/generate/scenes",
        json={"product_uuid": product["uuid"], "num_scenes": 1},
        headers=owner.key_headers,
    )
    job_id = r.json()["job_id"]
    assert client.get(f"/api/v2/jobs/{job_id}", headers=other.key_headers).status_code == 404
    assert client.get("/api/v2/jobs", headers=other.key_headers).json() == []
    # Nor can the other account start a job on the owner's product.
    r = client.post(
        "/api/v2/generate/scenes",
        json={"product_uuid": product["uuid"], "num_scenes": 1},
        headers=other.key_headers,
    )
    assert r.status_code == 404
    assert wait_terminal(client, owner, job_id)["status"] == "completed"


@pytest.mark.both_databases
def test_cancel_a_job_releases_its_unused_credits(client: TestClient, resources: Resources) -> None:
    """``POST /api/v2/jobs/{id}/cancel``: the job ends ``failed`` with error ``cancelled``, it
    keeps (and is charged for) only what it delivered, the rest comes back; a second cancel is
    a 409, another account's cancel a 404."""
    acct = make_account(resources, credits=20)
    other = make_account(resources, credits=20)
    product = upload_product(client, acct)
    r = client.post(
        "/api/v2/generate/scenes",
        json={"product_uuid": product["uuid"], "num_scenes": 12},
        headers=acct.key_headers,
    )
    assert r.status_code == 202, r.text
    job_id = r.json()["job_id"]
    assert balance_of(resources, acct.id) == 8

    stranger = client.post(f"/api/v2/jobs/{job_id}/cancel", headers=other.key_headers)
    assert stranger.status_code == 404
    c = client.post(f"/api/v2/jobs/{job_id}/cancel", headers=acct.key_headers)
    assert c.status_code == 200, c.text
    assert c.json()["status"] == "failed" and c.json()["error"] == "cancelled"

    # A running scene may still be finishing; once nothing runs, the job is as the cancel left it.
    drain_jobs(resources)
    assert held_reservations(resources, acct.id) == 0
    job = client.get(f"/api/v2/jobs/{job_id}", headers=acct.key_headers).json()
    assert job["status"] == "failed" and job["error"] == "cancelled"
    assert job["credits_used"] == len(job["results"]) < 12
    assert balance_of(resources, acct.id) == 20 - job["credits_used"]
    assert ledger_consistent(resources, acct.id)
    again = client.post(f"/api/v2/jobs/{job_id}/cancel", headers=acct.key_headers)
    assert again.status_code == 409 and "failed" in again.json()["detail"]
    assert client.post("/api/v2/jobs/nope/cancel", headers=acct.key_headers).status_code == 404
