"""The interface's Limits table: up to 30 outputs per generate call. A 30-output try-on job
completes with 30 images, one credit captured per delivered image, while the job runner renders
and stores one output at a time, so the memory a job holds does not grow with its count (the
peak of traced allocations, numpy's buffers included, of a 30-output job against a 3-output
one); 31 is a 422 on every generate call, nothing charged."""

from __future__ import annotations

import time
import tracemalloc
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient

from pixelmill.resources import Resources
from tests.generation.test_people import _avatar, _product, _start, tshirt
from tests.support.accounts import login, make_account
from tests.support.api import wait_terminal
from tests.support.credits import balance_of, held_reservations, ledger_consistent


def _traced_job(client: TestClient, acct: Any, avatar: str, shirt: str, n: int) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        r = _start(client, acct, "tryon", avatar_uuid=avatar, product_uuid=shirt, num_outputs=n)
        assert r.status_code == 202, r.text
        assert r.json()["credits_reserved"] == n
        job = wait_terminal(client, acct, r.json()["job_id"], timeout=600)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return job, peak


@pytest.mark.slow
def test_thirty_output_tryon_job_in_bounded_memory(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=40)
    avatar = _avatar(client, acct)
    shirt = _product(client, acct, tshirt(), "clothing")
    before = balance_of(resources, acct.id)

    t0 = time.monotonic()
    small, small_peak = _traced_job(client, acct, avatar, shirt, 3)
    t1 = time.monotonic()
    job, peak = _traced_job(client, acct, avatar, shirt, 30)
    t2 = time.monotonic()
    print(
        f"3 outputs: {t1 - t0:.1f} s, peak {small_peak / 2**20:.1f} MiB; "
        f"30 outputs: {t2 - t1:.1f} s, peak {peak / 2**20:.1f} MiB"
    )
    assert small["status"] == job["status"] == "completed", job
    assert len(job["results"]) == 30 and job["credits_used"] == 30
    assert len({r["url"] for r in job["results"]}) == 30
    assert balance_of(resources, acct.id) == before - 33
    assert held_reservations(resources, acct.id) == 0
    assert ledger_consistent(resources, acct.id)
    # One output in flight at a time: ten times the outputs, about the same peak.
    assert peak < small_peak * 1.5 + 16 * 2**20, (small_peak, peak)


@pytest.mark.slow
def test_thirty_is_the_most_on_every_generate_call(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=100)
    jwt = {"Authorization": f"Bearer {login(client, acct.email, acct.password)}"}
    # The count is checked before anything is looked up.
    avatar, shirt = str(uuid.uuid4()), str(uuid.uuid4())
    before = balance_of(resources, acct.id)
    too_many = [
        ("/api/v2/generate/avatar", {"prompt": "a man", "num_outputs": 31}, acct.key_headers),
        ("/api/v2/generate/avatar", {"prompt": "a man", "count": 31}, acct.key_headers),
        (
            "/api/v2/generate/product-photo",
            {"avatar_uuid": avatar, "product_uuid": shirt, "num_outputs": 31},
            acct.key_headers,
        ),
        (
            "/api/v2/generate/tryon",
            {"avatar_uuid": avatar, "product_uuid": shirt, "num_outputs": 31},
            acct.key_headers,
        ),
        ("/api/avatars/generate-guided", {"prompt": "a man", "count": 31}, jwt),
        ("/api/avatars/generate-from-reference", {"reference_image": "eA==", "count": 31}, jwt),
    ]
    for path, body, headers in too_many:
        r = client.post(path, json=body, headers=headers)
        assert r.status_code == 422, (path, r.text)
        assert "30" in str(r.json()["detail"]), (path, r.text)
    assert balance_of(resources, acct.id) == before

    # The synchronous studio generator draws all 30 in one call, 1 credit each (it holds the
    # 30 images until they are stored: 30 x 1024 x 768 RGB, about 70 MiB, per admitted call).
    tracemalloc.start()
    try:
        r = client.post(
            "/api/avatars/generate-guided",
            json={"prompt": "a woman, red coat", "count": 30},
            headers=jwt,
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(f"30 guided avatars, synchronously: peak {peak / 2**20:.1f} MiB")
    assert r.status_code == 200, r.text
    assert r.json()["credits_used"] == 30 and len(set(r.json()["images"])) == 30
    assert balance_of(resources, acct.id) == before - 30
    assert held_reservations(resources, acct.id) == 0
