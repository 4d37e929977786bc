"""Products uploaded without a category or description are analysed in the background by the
analysis engine; given fields are never overwritten."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pixelmill.config import Settings
from pixelmill.resources import Resources
from tests.support.accounts import make_account
from tests.support.api import get_json, upload_product
from tests.support.settings import job_settings
from tests.support.waiting import wait_until


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return job_settings(database_url, tmp_path / "data", analyze_products=True)


def test_missing_description_is_filled_by_the_analysis(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=1)
    product = upload_product(client, acct)
    quick = product["description"]
    path = f"/api/v2/products/{product['uuid']}"
    analysed = wait_until(
        lambda: (body := get_json(client, acct, path))["description"] != quick and body,
        timeout=120,
        interval=0.2,
    )
    # The engine's sentence about a plain-background product shot.
    assert "object on a plain background" in analysed["description"]
    assert analysed["category"] in ("other", "houseware", "beauty", "electronics", "food")

    given = upload_product(client, acct, category="jewelry")
    path = f"/api/v2/products/{given['uuid']}"
    body = wait_until(
        lambda: (b := get_json(client, acct, path))["description"] != given["description"] and b,
        timeout=120,
        interval=0.2,
    )
    assert body["category"] == "jewelry"  # given: never overwritten
