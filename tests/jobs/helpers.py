"""Helpers for the asynchronous-work tests: fast settings, uploads and polling through the
real HTTP surface (no shortcuts into the services)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from pixelmill.config import Settings
from pixelmill.credits import ledger
from pixelmill.db.models import CreditReservation
from pixelmill.resources import Resources
from tests.conftest import make_settings
from tests.images import png_bytes
from tests.support import Account, wait_until

FAST = {
    "scene_size": 256,
    "webhook_retry_base_seconds": 0.2,
    "webhook_max_attempts": 4,
    "webhook_timeout_seconds": 5,
    "job_workers": 2,
    "sweep_interval_seconds": 3600,
    # Seconds of CPU per upload; tests/library/test_analysis.py turns it on.
    "analyze_products": False,
}


def job_settings(database_url: str, data_dir: Path, **overrides: object) -> Settings:
    return make_settings(database_url, data_dir, **{**FAST, **overrides})


def b64_png(w: int = 160, h: int = 120) -> str:
    return base64.b64encode(png_bytes(w, h)).decode()


def upload_product(client: TestClient, account: Account, **extra: Any) -> dict[str, Any]:
    r = client.post(
        "/api/v2/products",
        json={"image": b64_png(), "filename": "bottle.png", **extra},
        headers=account.key_headers,
    )
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    return body


def get_json(client: TestClient, account: Account, path: str) -> dict[str, Any]:
    r = client.get(path, headers=account.key_headers)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def wait_terminal(
    client: TestClient, account: Account, job_id: str, timeout: float = 60
) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        body = get_json(client, account, f"/api/v2/jobs/{job_id}")
        return body if body["status"] in ("completed", "failed") else None

    result: dict[str, Any] = wait_until(done, timeout=timeout, interval=0.1)
    return result


def wait_batch(
    client: TestClient, account: Account, batch_id: str, timeout: float = 90
) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        body = get_json(client, account, f"/api/v2/batches/{batch_id}")
        return body if body["status"] == "completed" else None

    result: dict[str, Any] = wait_until(done, timeout=timeout, interval=0.1)
    return result


def ledger_consistent(resources: Resources, user_id: int) -> bool:
    with resources.db.read() as session:
        return ledger.balance(session, user_id) == ledger.ledger_sum(session, user_id)


def held_reservations(resources: Resources, user_id: int) -> int:
    with resources.db.read() as session:
        return int(
            session.scalar(
                select(func.count())
                .select_from(CreditReservation)
                .where(CreditReservation.user_id == user_id, CreditReservation.status == "held")
            )
            or 0
        )
