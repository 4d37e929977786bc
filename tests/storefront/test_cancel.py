"""DELETE of a running enrichment job: the job is cancelled (what it delivered stays charged,
the rest released), its files go, the run still in flight loses its claim and writes nothing,
and the account's balance equals the sum of its ledger; base64 images work as inputs."""

from __future__ import annotations

import base64
import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from pixelmill.db.models import EnrichmentJob, Job, JobResult, StorefrontActivity
from pixelmill.resources import Resources
from pixelmill.storage.local import LocalStorage
from tests.storefront.helpers import COLOURS, JOBS, SHOP, image_server, png
from tests.support.accounts import make_account
from tests.support.credits import balance_of, held_reservations, ledger_consistent
from tests.support.waiting import drain_jobs, wait_until


def _result_files(resources: Resources) -> list[Path]:
    assert isinstance(resources.storage, LocalStorage)
    return [p for p in (resources.storage.root / "results").glob("*") if p.is_file()]


@pytest.mark.both_databases
def test_delete_mid_run_cancels_releases_and_removes(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=30)
    gate = threading.Event()
    routes = {"/fast.png": png(COLOURS["blue"]), "/slow.png": png(COLOURS["red"])}
    with image_server(routes, gate=gate, gated="/slow.png") as images:
        products = [
            {"id": "fast", "title": "Blue Mug", "image_url": f"{images}/fast.png"},
            {"id": "slow", "title": "Red Mug", "image_url": f"{images}/slow.png"},
            {
                "id": "inline",
                "title": "Green Mug",
                "image_base64": base64.b64encode(png(COLOURS["green"])).decode(),
            },
        ]
        r = client.post(
            JOBS,
            json={
                "shop_domain": SHOP,
                "products": products,
                "enrichments": ["alt_text", "images"],
            },
            headers=acct.key_headers,
        )
        assert r.status_code == 200, r.text
        number = r.json()["job_id"]
        assert r.json()["credits_reserved"] == 6
        url = f"{JOBS}/{number}"

        def first_done() -> bool:
            body = client.get(url, headers=acct.key_headers).json()
            return bool(body["status"] == "processing" and body["products_completed"] == 1)

        wait_until(first_done, timeout=60, interval=0.1)
        assert balance_of(resources, acct.id) == 24  # 6 held
        with resources.db.read() as session:
            job_id = session.scalar(select(EnrichmentJob.job_id).where(EnrichmentJob.id == number))
        assert len(_result_files(resources)) == 2

        deleted = client.delete(url, headers=acct.key_headers)
        assert deleted.status_code == 200, deleted.text
        assert deleted.json()["files_deleted"] == 2
        assert deleted.json()["credits_released"] == 4  # 2 of 6 were delivered
        assert client.get(url, headers=acct.key_headers).status_code == 404
        assert client.delete(url, headers=acct.key_headers).status_code == 404
        assert balance_of(resources, acct.id) == 28
        assert held_reservations(resources, acct.id) == 0
        assert ledger_consistent(resources, acct.id)

        # Let the run in flight fetch its slow image and try to record it: it lost its claim.
        gate.set()
        drain_jobs(resources)
    assert not _result_files(resources)
    assert balance_of(resources, acct.id) == 28 and ledger_consistent(resources, acct.id)
    with resources.db.read() as session:
        assert session.get(Job, job_id) is None
        assert session.scalar(select(func.count()).where(JobResult.job_id == job_id)) == 0
        activity = session.scalar(
            select(StorefrontActivity).where(StorefrontActivity.job_id == number)
        )
    assert activity is not None and activity.status == "failed"
    assert "cancelled" in (activity.error_message or "")
    assert activity.credits_used == 2
    # The base64 upload kept for the job is gone with it.
    assert isinstance(resources.library_storage, LocalStorage)
    assert not list((resources.library_storage.root / "inputs").glob("enrich-*"))
