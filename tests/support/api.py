"""Calls through the real HTTP surface (no shortcuts into the services): uploads, reads, and
polling a job or a batch until it ends."""

from __future__ import annotations

import base64
from typing import Any

from fastapi.testclient import TestClient

from tests.support.accounts import Account
from tests.support.images import png_bytes
from tests.support.waiting import wait_until


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
