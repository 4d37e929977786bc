"""Usage adds up: after synchronous calls, a scene job and a batch, ``GET /api/v2/usage`` by
operation and by day totals the credits the ledger shows spent on work, grants are not usage,
usage plus grants is the ledger, CSV says the same, another account sees none of it, and
``pixelmill admin usage`` reports it across accounts."""

from __future__ import annotations

import base64
import csv
import io
from datetime import date, timedelta

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from pixelmill.cli import app
from pixelmill.credits import ledger
from pixelmill.resources import Resources
from tests.support.accounts import make_account
from tests.support.api import upload_product, wait_terminal
from tests.support.credits import consistent_balance
from tests.support.images import png_bytes
from tests.support.waiting import wait_until
from tests.test_cli import cli_env  # noqa: F401  (the fixture)

pytestmark = pytest.mark.both_databases


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_usage_adds_up_to_the_ledger(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=30)
    other = make_account(resources, credits=5, tag="other")
    image = {"image_base64": _b64(png_bytes(96, 64))}
    for _ in range(2):
        r = client.post("/api/v2/remove-background", json=image, headers=acct.key_headers)
        assert r.status_code == 200, r.text
    product = upload_product(client, acct)
    r = client.post(
        "/api/v2/generate/scenes",
        json={"product_uuid": product["uuid"], "num_scenes": 2},
        headers=acct.key_headers,
    )
    assert r.status_code == 202, r.text
    assert wait_terminal(client, acct, r.json()["job_id"])["status"] == "completed"
    r = client.post(
        "/api/v2/batches",
        json={
            "images": [{"id": "sku-1", "image": _b64(png_bytes(120, 90))}],
            "images_per_product": 1,
        },
        headers=acct.key_headers,
    )
    assert r.status_code == 202, r.text
    batch_id = r.json()["batch_id"]

    def batch_done() -> bool:
        b = client.get(f"/api/v2/batches/{batch_id}", headers=acct.key_headers).json()
        return b["status"] in ("completed", "failed", "partial")

    wait_until(batch_done, timeout=120, interval=0.2)

    balance = consistent_balance(resources, acct.id)
    spent = 30 - balance
    by_op = client.get("/api/v2/usage?group_by=operation", headers=acct.key_headers).json()
    assert by_op["total_credits"] == spent == 2 + 2 + 1, by_op
    rows = {row["operation"]: row["credits"] for row in by_op["rows"]}
    assert rows == {"background_removal": 2, "scenes": 2, "batch": 1}
    by_day = client.get("/api/v2/usage", headers=acct.key_headers).json()
    assert by_day["group_by"] == "day" and by_day["total_credits"] == spent
    assert [row["day"] for row in by_day["rows"]] == [date.today().isoformat()]
    r = client.get("/api/v2/usage?group_by=operation&format=csv", headers=acct.key_headers)
    assert r.headers["content-type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(r.text)))
    assert sum(int(row["credits"]) for row in table) == spent
    # Grants are history, not usage: usage plus the grants is the ledger.
    with resources.db.read() as session:
        assert ledger.ledger_sum(session, acct.id) == 30 - spent
    mine = client.get("/api/v2/usage", headers=other.key_headers).json()
    assert mine["total_credits"] == 0 and mine["rows"] == []
    tomorrow = (date.today() + timedelta(days=1)).isoformat()
    empty = client.get(f"/api/v2/usage?from={tomorrow}&to={tomorrow}", headers=acct.key_headers)
    assert empty.json()["total_credits"] == 0
    bad = client.get(f"/api/v2/usage?from={tomorrow}&to=2020-01-01", headers=acct.key_headers)
    assert bad.status_code == 422 and "from must be on or before to" in bad.json()["detail"]


def test_admin_usage_across_accounts(
    cli_env: dict[str, str],  # noqa: F811
    client: TestClient,
    resources: Resources,
) -> None:
    acct = make_account(resources, credits=10)
    r = client.post(
        "/api/v2/remove-background",
        json={"image_base64": _b64(png_bytes(96, 64))},
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    today = date.today().isoformat()
    runner = CliRunner()
    out = runner.invoke(
        app,
        ["admin", "usage", "--from", today, "--to", today, "--email", acct.email, "--csv"],
        env=cli_env,
    )
    assert out.exit_code == 0, out.output
    assert out.output.splitlines() == ["operation,credits", "background_removal,1"]
    everyone = runner.invoke(app, ["admin", "usage", "--from", today, "--to", today], env=cli_env)
    assert everyone.exit_code == 0 and "background_removal" in everyone.output
    assert "grants and purchases" in everyone.output
