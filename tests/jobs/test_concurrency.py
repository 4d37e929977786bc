"""Money under concurrency: many clients creating jobs and batches at once while batches are
cancelled mid-run; afterwards every reservation is settled, no credit was spent twice or
created, and ``balance == sum(ledger)``."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient

from pixelmill.resources import Resources
from tests.support.accounts import make_account
from tests.support.api import b64_png, get_json, upload_product, wait_batch, wait_terminal
from tests.support.credits import balance_of, held_reservations, ledger_consistent

pytestmark = pytest.mark.both_databases


def test_concurrent_creates_and_cancels_keep_the_ledger_exact(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=40)
    product = upload_product(client, acct)
    image = b64_png()

    def create_job(_: int) -> tuple[int, dict[str, object]]:
        r = client.post(
            "/api/v2/generate/scenes",
            json={"product_uuid": product["uuid"], "num_scenes": 2},
            headers=acct.key_headers,
        )
        return r.status_code, r.json()

    def create_batch(_: int) -> tuple[int, dict[str, object]]:
        r = client.post(
            "/api/v2/batches",
            json={
                "images": [{"id": "a", "image": image}, {"id": "b", "image": image}],
                "images_per_product": 3,
            },
            headers=acct.key_headers,
        )
        return r.status_code, r.json()

    with ThreadPoolExecutor(8) as pool:
        jobs = list(pool.map(create_job, range(8)))  # 16 credits asked
        batches = list(pool.map(create_batch, range(6)))  # 36 credits asked
    accepted_jobs = [body for code, body in jobs if code == 202]
    accepted_batches = [body for code, body in batches if code == 202]
    refused = [code for code, _ in jobs + batches if code != 202]
    assert set(refused) <= {402}
    reserved = 2 * len(accepted_jobs) + 6 * len(accepted_batches)
    assert reserved <= 40  # never more than the balance, whatever the interleaving

    with ThreadPoolExecutor(4) as pool:
        cancels = list(
            pool.map(
                lambda b: (
                    client.post(
                        f"/api/v2/batches/{b['batch_id']}/cancel", headers=acct.key_headers
                    ).status_code
                ),
                accepted_batches[::2],
            )
        )
    assert set(cancels) <= {200, 409}

    used = 0
    for body in accepted_jobs:
        job = wait_terminal(client, acct, str(body["job_id"]), timeout=180)
        assert job["credits_used"] == len(job["results"])
        used += job["credits_used"]
    for body in accepted_batches:
        batch = wait_batch(client, acct, str(body["batch_id"]), timeout=180)
        full = get_json(client, acct, f"/api/v2/batches/{body['batch_id']}")
        delivered = sum(len(img["results"]) for img in full["images"])
        assert batch["credits_used"] == delivered
        used += delivered
    assert balance_of(resources, acct.id) == 40 - used
    assert held_reservations(resources, acct.id) == 0
    assert ledger_consistent(resources, acct.id)
