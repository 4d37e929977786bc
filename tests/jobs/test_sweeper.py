"""Issue #61: the sweeper tells a job that was never sent to the queue (its server died between
saving and sending, or the broker was down) from one whose message is in the queue. The first
is sent within seconds (``UNSENT_GRACE_SECONDS``), the second only after the dispatch timeout
(its message lost with the broker), so a backlog waiting in the queue is not sent again every
few seconds. Real Celery queue on the real Redis (a queue name of the test's own, no worker:
the messages stay there to be counted), real database."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlparse

import pytest
import redis
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from pixelmill.app import create_app
from pixelmill.config import Settings
from pixelmill.db.base import utcnow
from pixelmill.db.models import Job
from pixelmill.jobs import tasks
from pixelmill.jobs.sweeper import UNSENT_GRACE_SECONDS
from pixelmill.resources import Resources, build_resources
from tests.support.accounts import make_account
from tests.support.api import upload_product
from tests.support.servers import client_for
from tests.support.services import REDIS_URL, require_service
from tests.support.settings import job_settings

pytestmark = [pytest.mark.both_databases, pytest.mark.redis]

DISPATCH_TIMEOUT_S = 20.0


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    parsed = urlparse(REDIS_URL)
    require_service("Redis", parsed.hostname or "127.0.0.1", parsed.port or 6379)
    return job_settings(
        database_url,
        tmp_path / "data",
        queue="celery",
        redis_url=REDIS_URL,
        celery_queue=f"pixelmill-sweeper-{uuid.uuid4().hex[:8]}",
        job_dispatch_timeout_seconds=DISPATCH_TIMEOUT_S,
    )


@pytest.fixture
def resources(settings: Settings) -> Iterator[Resources]:
    res = build_resources(settings)
    yield res
    res.close()
    with redis.Redis.from_url(REDIS_URL) as client:
        client.delete(settings.celery_queue)


@pytest.fixture
def broker_down(settings: Settings) -> Iterator[Resources]:
    """A server of the same install whose broker is unreachable (nothing listens on port 1):
    what it saves, it cannot send."""
    res = build_resources(settings.model_copy(update={"redis_url": "redis://127.0.0.1:1/0"}))
    yield res
    res.close()


def sweep(res: Resources) -> int:
    counts = tasks.sweep(res.jobs, dispatch_timeout_seconds=DISPATCH_TIMEOUT_S, max_attempts=3)
    return counts["redispatched"]


def age(res: Resources, job_id: str, seconds: float) -> None:
    """The job as the sweep sees it ``seconds`` after its last save or dispatch."""
    with res.db.transaction() as session:
        session.execute(
            update(Job)
            .where(Job.id == job_id)
            .values(updated_at=utcnow() - timedelta(seconds=seconds))
        )


def status(res: Resources, job_id: str) -> str:
    with res.db.read() as session:
        return str(session.scalar(select(Job.status).where(Job.id == job_id)))


def create_scene_job(res: Resources, settings: Settings) -> str:
    acct = make_account(res, credits=10)
    with client_for(create_app(settings, res)) as client:
        assert isinstance(client, TestClient)
        product = upload_product(client, acct)
        r = client.post(
            "/api/v2/generate/scenes",
            json={"product_uuid": product["uuid"], "num_scenes": 1},
            headers=acct.key_headers,
        )
    assert r.status_code == 202, r.text  # saved and answered, whatever the broker did
    job_id: str = r.json()["job_id"]
    return job_id


def test_a_sent_job_is_queued_with_its_message(resources: Resources, settings: Settings) -> None:
    job_id = create_scene_job(resources, settings)
    assert status(resources, job_id) == "queued"
    assert resources.queue.depth()["jobs"] == 1
    # Waiting in the queue is not lost: not sent again before the dispatch timeout.
    age(resources, job_id, DISPATCH_TIMEOUT_S - 2)
    assert sweep(resources) == 0
    assert resources.queue.depth()["jobs"] == 1
    age(resources, job_id, DISPATCH_TIMEOUT_S + 1)
    assert sweep(resources) == 1
    assert resources.queue.depth()["jobs"] == 2
    assert status(resources, job_id) == "queued"


def test_a_job_never_sent_is_sent_by_the_first_sweep_after_the_grace(
    resources: Resources, broker_down: Resources, settings: Settings
) -> None:
    down = settings.model_copy(update={"redis_url": "redis://127.0.0.1:1/0"})
    job_id = create_scene_job(broker_down, down)
    # Saved (the creating transaction committed), never sent: still pending, nothing queued.
    assert status(resources, job_id) == "pending"
    assert resources.queue.depth()["jobs"] == 0
    # Just saved: its own server may still be sending it.
    assert sweep(resources) == 0
    age(resources, job_id, UNSENT_GRACE_SECONDS + 1)
    assert UNSENT_GRACE_SECONDS + 1 < DISPATCH_TIMEOUT_S  # long before the dispatch timeout
    assert sweep(resources) == 1
    # Sent, then marked: a job that is queued now, with its one message.
    assert status(resources, job_id) == "queued"
    assert resources.queue.depth()["jobs"] == 1
    age(resources, job_id, UNSENT_GRACE_SECONDS + 1)
    assert sweep(resources) == 0
    assert resources.queue.depth()["jobs"] == 1
