"""Money under concurrency: many clients creating jobs and batches at once while batches are
cancelled mid-run; afterwards every reservation is settled, no credit was spent twice or
created, and ``balance == sum(ledger)``."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

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


def test_claim_and_fail_lock_the_batch_before_its_item(
    client: TestClient, resources: Resources
) -> None:
    """Every transaction that moves a batch item and then its batch takes the batch row first,
    as the batch's cancel does: a claim that locked its job first deadlocked with a cancel on
    PostgreSQL (seen in a CI run). Judged on PostgreSQL's row locks, from a second connection;
    SQLite serialises its writers, so there only the calls themselves are checked."""
    from sqlalchemy import create_engine, select, text
    from sqlalchemy.exc import OperationalError

    from pixelmill.db.models import Batch, Job
    from pixelmill.jobs import service

    acct = make_account(resources, credits=10)
    r = client.post(
        "/api/v2/batches",
        json={"images": [{"id": "a", "image": b64_png()}], "images_per_product": 1},
        headers=acct.key_headers,
    )
    assert r.status_code == 202, r.text
    batch_id = r.json()["batch_id"]
    wait_batch(client, acct, batch_id)  # no runner holds a row any more
    with resources.db.read() as session:
        job_id = session.scalar(select(Job.id).where(Job.batch_id == batch_id))
    assert job_id is not None
    url = str(resources.settings.database_url)
    postgres = url.startswith("postgresql")
    other = create_engine(url)

    def batch_is_locked() -> bool:
        with other.connect() as conn:
            conn.execute(text("SET lock_timeout = '100ms'"))
            try:
                conn.execute(select(Batch.id).where(Batch.id == batch_id).with_for_update())
            except OperationalError:
                return True
            return False

    steps: dict[str, Callable[[Session], object]] = {
        "claim": lambda s: service.claim(s, job_id, 60),
        "fail": lambda s: service.fail_job(s, resources.jobs, job_id, "x"),
    }
    try:
        for name, step in steps.items():
            if postgres:
                assert not batch_is_locked(), name
            with resources.db.transaction() as session:
                assert not step(session)  # the job is completed: nothing moves
                if postgres:
                    assert batch_is_locked(), f"{name} did not lock the batch first"
    finally:
        other.dispose()
