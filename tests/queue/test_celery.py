"""The Celery queue on real Redis with real ``pixelmill worker`` processes: jobs and batches
complete through the worker, and a worker killed (SIGKILL) mid-job leaves a job that the
sweeper hands to another worker, finished and charged once."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from pixelmill.app import create_app
from pixelmill.config import Settings
from pixelmill.resources import Resources, build_resources
from pixelmill.worker import sweep as sweep_jobs
from pixelmill.worker import wire
from tests.queue.workers import celery_workers, kill, start_worker
from tests.support.accounts import make_account
from tests.support.api import b64_png, get_json, upload_product, wait_batch, wait_terminal
from tests.support.credits import balance_of, held_reservations, ledger_consistent
from tests.support.servers import client_for
from tests.support.services import REDIS_URL, require_service
from tests.support.settings import job_settings
from tests.support.waiting import wait_until
from tests.support.webhooks import verify, webhook_receiver


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    from urllib.parse import urlparse

    parsed = urlparse(REDIS_URL)
    require_service("Redis", parsed.hostname or "127.0.0.1", parsed.port or 6379)
    return job_settings(
        database_url,
        tmp_path / "data",
        queue="celery",
        redis_url=REDIS_URL,
        celery_queue=f"pixelmill-test-{uuid.uuid4().hex[:8]}",
        job_lease_seconds=10,
    )


@pytest.fixture
def resources(settings: Settings) -> Iterator[Resources]:
    res = wire(build_resources(settings))
    yield res
    res.close()


@pytest.fixture
def client(settings: Settings, resources: Resources) -> Iterator[TestClient]:
    app: FastAPI = create_app(settings, resources)
    with client_for(app) as c:
        yield c


def test_job_and_batch_run_on_a_celery_worker(
    client: TestClient, resources: Resources, settings: Settings, tmp_path: Path
) -> None:
    assert resources.queue.name == "celery"
    acct = make_account(resources, credits=20)
    product = upload_product(client, acct)
    with webhook_receiver(statuses=[500]) as rx, celery_workers(settings, tmp_path / "worker.log"):
        secret = client.post(
            "/api/v2/webhooks", json={"url": rx.url}, headers=acct.key_headers
        ).json()["secret"]
        r = client.post(
            "/api/v2/generate/scenes",
            json={"product_uuid": product["uuid"], "num_scenes": 3},
            headers=acct.key_headers,
        )
        assert r.status_code == 202
        job = wait_terminal(client, acct, r.json()["job_id"], timeout=120)
        assert job["status"] == "completed", job
        assert len(job["results"]) == 3 and job["credits_used"] == 3
        b = client.post(
            "/api/v2/batches",
            json={
                "images": [{"id": "a", "image": b64_png()}, {"id": "b", "image": b64_png()}],
                "images_per_product": 2,
            },
            headers=acct.key_headers,
        )
        batch = wait_batch(client, acct, b.json()["batch_id"], timeout=120)
        # The worker delivers the events; the first answer is a 500, retried with a countdown.
        wait_until(
            lambda: any(
                json.loads(req.body)["event"] == "batch.completed" for req in rx.snapshot()[1:]
            ),
            timeout=60,
        )
        received = rx.snapshot()
    assert batch["progress"]["completed"] == 2 and batch["credits_used"] == 4
    assert all(verify(secret, req) for req in received)
    events = [json.loads(req.body)["event"] for req in received]
    assert events.count("job.completed") >= 1 and "batch.completed" in events
    assert balance_of(resources, acct.id) == 20 - 3 - 4
    assert held_reservations(resources, acct.id) == 0
    assert ledger_consistent(resources, acct.id)


@pytest.mark.both_databases
def test_worker_killed_mid_job_is_finished_by_the_sweeper_and_charged_once(
    client: TestClient, resources: Resources, settings: Settings, tmp_path: Path
) -> None:
    acct = make_account(resources, credits=20)
    product = upload_product(client, acct)
    log = tmp_path / "worker.log"
    # The first worker renders full-size scenes (~0.1-0.5 s each, against a few ms at the tests'
    # 256 px) so that it is reliably killed part-way: at 256 px a fast machine finished all 12
    # between two polls. The sweeper's worker below renders at the usual test size.
    first = start_worker(settings.model_copy(update={"scene_size": 1024}), log)
    try:
        r = client.post(
            "/api/v2/generate/scenes",
            json={"product_uuid": product["uuid"], "num_scenes": 12},
            headers=acct.key_headers,
        )
        job_id = r.json()["job_id"]
        path = f"/api/v2/jobs/{job_id}"
        wait_until(lambda: get_json(client, acct, path)["progress"]["completed"] >= 1, timeout=120)
    finally:
        kill(first)
    stranded = get_json(client, acct, path)
    assert stranded["status"] == "processing"
    assert 1 <= stranded["progress"]["completed"] < 12
    # Nothing renews the lease now; the sweeper takes the job back once it expires.
    wait_until(lambda: sweep_jobs(resources)["requeued"] == 1, timeout=60, interval=0.5)
    assert get_json(client, acct, path)["status"] == "queued"
    with celery_workers(settings, log):
        job = wait_terminal(client, acct, job_id, timeout=120)
    assert job["status"] == "completed", job
    assert job["credits_used"] == 12
    assert len(job["results"]) == 12
    assert len({res["scene"] for res in job["results"]}) == 12
    assert balance_of(resources, acct.id) == 8
    assert held_reservations(resources, acct.id) == 0
    assert ledger_consistent(resources, acct.id)
