"""An enrichment job is settled (its activity, results and event) by its kind's terminal hook,
in the transaction that ends its run. One whose run ended without it (a job that ended before
the hook existed) still reads as ``processing`` until a read settles it: ``completed`` or
``failed`` is never shown without the activity. On PostgreSQL a read that loads the job's run
after the run's commit used to see ``completed`` with ``activity_id`` null (a CI failure of
the live enrichment test)."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import pytest
from fastapi.testclient import TestClient

from pixelmill.jobs import service as jobs
from pixelmill.resources import Resources
from pixelmill.storefront import service as storefront
from tests.storefront.helpers import ACTIVITIES, COLOURS, JOBS, SHOP, image_server, png
from tests.support.accounts import make_account
from tests.support.credits import balance_of, held_reservations, ledger_consistent
from tests.support.waiting import drain_jobs, wait_until

pytestmark = pytest.mark.both_databases


def test_an_ended_run_reads_as_processing_until_it_is_settled(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    gate = threading.Event()
    routes = {"/slow.png": png(COLOURS["red"])}
    with image_server(routes, gate=gate, gated="/slow.png") as images:
        product = {"id": "slow", "title": "Red Mug", "image_url": f"{images}/slow.png"}
        r = client.post(
            JOBS,
            json={"shop_domain": SHOP, "products": [product], "enrichments": ["images"]},
            headers=acct.key_headers,
        )
        assert r.status_code == 200, r.text
        number = r.json()["job_id"]
        url = f"{JOBS}/{number}"

        def running() -> bool:
            return bool(client.get(url, headers=acct.key_headers).json()["status"] == "processing")

        wait_until(running, timeout=60, interval=0.1)

        with resources.db.read() as reader:
            row = storefront.get_enrichment_job(reader, acct.id, number)  # the run not loaded
            assert row.job_id is not None and row.settled_at is None
            # The run ends (failed, as the sweeper fails a stalled run) and commits, unsettled
            # (without the kind's terminal hook).
            hookless = dataclasses.replace(resources.jobs, on_terminal={})
            with resources.db.transaction() as session:
                assert jobs.fail_job(session, hookless, row.job_id, "stalled")
            # PostgreSQL's next statement sees that commit (SQLite's snapshot does not).
            status, run = storefront.status_of(reader, row)
            assert status == "processing" and run is not None
            fields: dict[str, Any] = storefront.job_out(reader, row, "http://test").model_dump()
            assert fields["status"] == "processing" and fields["activity_id"] is None
            assert fields["completed_at"] is None

        # A list filtered on a status (without settling first) counts it as processing.
        with resources.db.read() as reader:
            for status, total in (("failed", 0), ("processing", 1)):
                _, count = storefront.list_enrichment_jobs(
                    reader, acct.id, shop_domain=None, status=status, limit=10
                )
                assert count == total, status

        # The next read settles it: failed, with its activity.
        body = client.get(url, headers=acct.key_headers).json()
        assert body["status"] == "failed" and body["error_message"] == "stalled"
        assert isinstance(body["activity_id"], int) and body["completed_at"] is not None
        activity = client.get(f"{ACTIVITIES}/{body['activity_id']}", headers=acct.key_headers)
        assert activity.status_code == 200 and activity.json()["status"] == "failed"
        listed = client.get(JOBS, params={"status": "failed"}, headers=acct.key_headers)
        assert listed.json()["total"] == 1

        # The run still in flight fetches its image, finds it lost its claim and writes nothing.
        gate.set()
        drain_jobs(resources)
    after = client.get(url, headers=acct.key_headers).json()
    assert after["status"] == "failed" and after["activity_id"] == body["activity_id"]
    assert after["products_completed"] == 0 and after["credits_used"] == 0
    assert balance_of(resources, acct.id) == 10 and held_reservations(resources, acct.id) == 0
    assert ledger_consistent(resources, acct.id)


def test_the_terminal_hook_settles_in_the_transaction_that_ends_the_run(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    gate = threading.Event()
    routes = {"/slow.png": png(COLOURS["red"])}
    with image_server(routes, gate=gate, gated="/slow.png") as images:
        product = {"id": "slow", "title": "Red Mug", "image_url": f"{images}/slow.png"}
        r = client.post(
            JOBS,
            json={"shop_domain": SHOP, "products": [product], "enrichments": ["images"]},
            headers=acct.key_headers,
        )
        assert r.status_code == 200, r.text
        number = r.json()["job_id"]
        with resources.db.read() as reader:
            job_id = storefront.get_enrichment_job(reader, acct.id, number).job_id
        assert job_id is not None
        with resources.db.transaction() as session:
            assert jobs.fail_job(session, resources.jobs, job_id, "stalled")
            row = storefront.get_enrichment_job(session, acct.id, number)
            assert row.settled_at is not None and row.activity_id is not None
        with resources.db.read() as reader:
            _, count = storefront.list_enrichment_jobs(
                reader, acct.id, shop_domain=None, status="failed", limit=10
            )
            assert count == 1
        gate.set()
    body = client.get(f"{JOBS}/{number}", headers=acct.key_headers).json()
    assert body["status"] == "failed" and body["error_message"] == "stalled"
    assert balance_of(resources, acct.id) == 10 and held_reservations(resources, acct.id) == 0
