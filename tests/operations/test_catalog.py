"""Catalog prices read from credits/pricing.py; the scenes operation is priced per scene and is
reachable from no synchronous surface."""

from __future__ import annotations

from fastapi.testclient import TestClient

from pixelmill.credits.pricing import OPERATION_PRICES, published_prices
from pixelmill.engines.scenes import ScenesParams
from pixelmill.engines.upscale import UpscaleParams
from pixelmill.operations.catalog import CATALOG
from pixelmill.resources import Resources
from tests.support.accounts import make_account
from tests.support.images import png_bytes


def test_prices_come_from_the_price_list() -> None:
    assert CATALOG["upscale"].price(UpscaleParams(scale=2)) == 1
    assert CATALOG["upscale"].price(UpscaleParams(scale=8)) == 2
    for n in (1, 4, 12):
        assert CATALOG["scenes"].price(ScenesParams(num_scenes=n)) == n * OPERATION_PRICES["scene"]
    assert CATALOG["scenes"].engine == "scenes" and CATALOG["scenes"].default_format == "jpeg"
    prices = published_prices()
    assert (prices["upscale_2x"], prices["upscale_4x"], prices["upscale_8x"]) == (1, 1, 2)


def test_no_synchronous_surface_runs_scenes(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=5)
    r = client.post(
        "/api/process",
        data={"processing_type": "scenes"},
        files={"image": ("p.png", png_bytes())},
        headers=acct.key_headers,
    )
    assert r.status_code == 422 and r.json()["error_code"] == "INVALID_PROCESSING_TYPE"
    sync_paths = [
        path
        for path in client.get("/.well-known/openapi.json").json()["paths"]
        if path.startswith(("/api/v1/", "/api/process", "/api/free-tools/"))
        or (path.startswith("/api/v2/") and "/generate/" not in path)
    ]
    assert not [path for path in sync_paths if "scene" in path]
