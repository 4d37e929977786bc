"""Platform ads, asset collections and ad packs through the real HTTP surface, with product
pages served by a real HTTP server on 127.0.0.1: sizes, parts, prices (59 with the video, 9
without), failures with every credit released (``balance == sum(ledger)``), private
addresses refused as image URLs are, the Activepieces/Pipedream request shapes, and other
accounts' ids answering 404."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from PIL import Image

from pixelmill.engines.ads import PLATFORMS
from pixelmill.resources import Resources
from tests.marketing.products import bottle, mug
from tests.support.accounts import Account, login, make_account
from tests.support.credits import balance_of, held_reservations, ledger_consistent
from tests.support.images import encode
from tests.support.servers import serve_bytes
from tests.support.waiting import wait_until


def _jwt(client: TestClient, acct: Account) -> dict[str, str]:
    return {"Authorization": f"Bearer {login(client, acct.email, acct.password)}"}


def _image(client: TestClient, url: str) -> Image.Image:
    r = client.get(url)
    assert r.status_code == 200, r.text
    return Image.open(io.BytesIO(r.content))


PAGE = """<!doctype html><html><head><title>Trail Bottle | Shop</title>
<meta property="og:title" content="Trail Bottle (og)">
<script type="application/ld+json">{ld}</script></head>
<body><h1>Trail Bottle</h1><img src="/logo.png" width="40" height="40"></body></html>"""

LD = {
    "@context": "https://schema.org",
    "@graph": [
        {"@type": "Organization", "name": "Peak Goods"},
        {
            "@type": "Product",
            "name": "Trail Bottle 750 ml",
            "description": "Double-walled steel keeps water cold for 24 hours. Leak-proof lid.",
            "brand": {"@type": "Brand", "name": "Peak Goods"},
            "image": ["/img/bottle.png"],
            "offers": {"@type": "Offer", "price": "29.00", "priceCurrency": "USD"},
        },
    ],
}


@contextmanager
def shop() -> Iterator[str]:
    routes = {
        "/product": (200, "text/html; charset=utf-8", PAGE.format(ld=json.dumps(LD)).encode()),
        "/empty": (200, "text/html", b"<html><body><p>Nothing to see</p></body></html>"),
        "/img/bottle.png": (200, "image/png", encode(bottle(), "PNG")),
        "/moved": (302, "text/plain", b"/product"),
        "/to-private": (302, "text/plain", b"http://10.0.0.1/product"),
    }
    with serve_bytes(routes) as base:
        yield base


def _poll(client: TestClient, acct: Account, path: str, timeout: float = 120) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        r = client.get(path, headers=acct.key_headers)
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        return body if body["status"] in ("completed", "failed") else None

    result: dict[str, Any] = wait_until(done, timeout=timeout, interval=0.2)
    return result


def _settled(resources: Resources, acct: Account) -> None:
    assert held_reservations(resources, acct.id) == 0
    assert ledger_consistent(resources, acct.id)


def test_generate_ai_ad_at_every_platform_size_for_free(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=3)
    headers = _jwt(client, acct)
    with serve_bytes({"/mug.png": (200, "image/png", encode(mug(), "PNG"))}) as base:
        styles = ["minimal", "bold", "elegant", "vibrant", "dark"]
        for i, (name, spec) in enumerate(PLATFORMS.items()):
            r = client.post(
                "/api/tryon/generate-ai-ad",
                json={
                    "image_url": f"{base}/mug.png",
                    "platform": name,
                    "headline": "Hand-thrown stoneware mug",
                    "tagline": "Made in small batches, glazed by hand.",
                    "style": styles[i % len(styles)],
                },
                headers=headers,
            )
            assert r.status_code == 200, r.text
            body = r.json()
            assert body["success"] is True and body["credits_used"] == 0
            assert "no generative model" in body["details"]["method"]
            assert body["details"]["min_contrast"] >= 4.5
            ad = _image(client, body["ad_url"])
            assert ad.size == (spec.width, spec.height), name
            for block in body["details"]["text_blocks"]:
                x0, y0, x1, y1 = block["box"]
                assert 0 <= x0 < x1 <= spec.width and 0 <= y0 < y1 <= spec.height
        # The default style is minimal; a bad platform is a 422; no token is a 401.
        r = client.post(
            "/api/tryon/generate-ai-ad",
            json={"image_url": f"{base}/mug.png", "platform": "instagram-square"},
            headers=headers,
        )
        assert r.status_code == 200 and r.json()["details"]["style"] == "minimal"
        bad = {"image_url": f"{base}/mug.png", "platform": "myspace"}
        assert (
            client.post("/api/tryon/generate-ai-ad", json=bad, headers=headers).status_code == 422
        )
        assert client.post("/api/tryon/generate-ai-ad", json=bad).status_code == 401
    assert balance_of(resources, acct.id) == 3


def test_asset_collection_makes_six_images_for_six_credits(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=12)
    other = make_account(resources, credits=10, tag="other")
    headers = _jwt(client, acct)
    r = client.post(
        "/api/tryon/start-asset-collection",
        files={"product_image": ("bottle.png", encode(bottle(), "PNG"), "image/png")},
        data={"category": "other", "product_description": "A steel bottle for long days."},
        headers=headers,
    )
    assert r.status_code == 202, r.text
    created = r.json()
    assert isinstance(created["collection_id"], int) and created["credits_reserved"] == 6
    path = f"/api/tryon/asset-collection/{created['collection_id']}"

    def done() -> dict[str, Any] | None:
        body: dict[str, Any] = client.get(path, headers=headers).json()
        return body if body["status"] in ("completed", "failed") else None

    body = wait_until(done, timeout=90, interval=0.2)
    assert body["status"] == "completed", body
    assert [i["type"] for i in body["images"]] == ["scene"] * 3 + ["silo", "ad", "ad"]
    assert body["credits_used"] == 6
    silo = _image(client, body["images"][3]["url"]).convert("RGB")
    assert silo.getpixel((2, 2)) == (255, 255, 255)
    assert _image(client, body["images"][5]["url"]).size == (1000, 1500)
    assert balance_of(resources, acct.id) == 6
    _settled(resources, acct)
    assert client.get(path, headers=_jwt(client, other)).status_code == 404
    # A photo with no product in it: the collection fails and its 6 credits come back.
    blank = np.full((300, 300, 3), 255, np.uint8)
    r = client.post(
        "/api/tryon/start-asset-collection",
        files={"product_image": ("blank.png", encode(blank, "PNG"), "image/png")},
        data={"category": "toys"},
        headers=headers,
    )
    assert r.status_code == 202, r.text
    path = f"/api/tryon/asset-collection/{r.json()['collection_id']}"
    failed = wait_until(done, timeout=60, interval=0.2)
    assert failed["status"] == "failed" and "no product" in failed["error"]
    assert failed["credits_used"] == 0 and balance_of(resources, acct.id) == 6
    _settled(resources, acct)
    bad = client.post(
        "/api/tryon/start-asset-collection",
        files={"product_image": ("b.png", encode(bottle(), "PNG"), "image/png")},
        data={"category": "spaceships"},
        headers=headers,
    )
    assert bad.status_code == 422


def test_ad_pack_from_a_product_page_with_video(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=100)
    other = make_account(resources, credits=5, tag="other")
    with shop() as base:
        # The Activepieces / Pipedream (PD-B) request, include_video left at its default true.
        r = client.post(
            "/api/v2/ad-pack",
            json={
                "url": f"{base}/product",
                "include_images": True,
                "include_ads": True,
                "include_captions": True,
                "include_animations": False,
            },
            headers=acct.key_headers,
        )
        assert r.status_code == 202, r.text
        created = r.json()
        assert isinstance(created["job_id"], int) and created["credits_reserved"] == 59
        assert created["poll_url"].endswith(f"/api/v2/ad-pack/{created['job_id']}")
        body = _poll(client, acct, f"/api/v2/ad-pack/{created['job_id']}", timeout=150)
    assert body["status"] == "completed", body
    product = body["product"]
    assert product["name"] == "Trail Bottle 750 ml" and product["brand"] == "Peak Goods"
    assert product["price"] == "29.00" and product["source"] == "json-ld"
    assert product["images"] == [f"{base}/img/bottle.png", f"{base}/logo.png"]
    assert len(body["product_images"]) == 6
    assert len(body["static_ads"]) == 8
    for ad in body["static_ads"]:
        spec = PLATFORMS[ad["platform"]]
        assert (ad["width"], ad["height"]) == (spec.width, spec.height)
        assert _image(client, ad["url"]).size == (spec.width, spec.height)
    assert {c["platform"] for c in body["captions"]} >= {"instagram", "twitter", "tiktok"}
    for caption in body["captions"]:
        assert 0 < len(caption["text"]) <= caption["limit"]
        assert all(t.startswith("#") for t in caption["hashtags"])
    video = client.get(body["ugc_video_url"])
    assert video.status_code == 200 and video.content[4:8] == b"ftyp"
    assert body["credits_used"] == 59
    assert balance_of(resources, acct.id) == 41
    _settled(resources, acct)
    assert (
        client.get(f"/api/v2/ad-pack/{created['job_id']}", headers=other.key_headers).status_code
        == 404
    )


def test_ad_pack_without_video_costs_nine(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=20)
    with shop() as base:
        # Through a redirect, and an Idempotency-Key sent twice: one job, charged once.
        headers = {**acct.key_headers, "Idempotency-Key": "pack-1"}
        request = {
            "url": f"{base}/moved",
            "include_images": True,
            "include_ads": True,
            "include_captions": True,
            "include_animations": True,
            "include_video": False,
        }
        r = client.post("/api/v2/ad-pack", json=request, headers=headers)
        assert r.status_code == 202, r.text
        again = client.post("/api/v2/ad-pack", json=request, headers=headers)
        assert again.status_code == 202 and again.json()["job_id"] == r.json()["job_id"]
        created = r.json()
        assert created["credits_reserved"] == 9
        assert created["parts"] == {"images": 6, "ads": 2, "captions": 1}
        assert created["warnings"] and "include_animations" in created["warnings"][0]
        body = _poll(client, acct, f"/api/v2/ad-pack/{created['job_id']}")
    assert body["status"] == "completed", body
    assert body["product"]["url"] == f"{base}/product"
    assert body["ugc_video_url"] is None
    assert len(body["product_images"]) == 6 and len(body["static_ads"]) == 8
    assert len(body["captions"]) == 6
    assert body["credits_used"] == 9 and balance_of(resources, acct.id) == 11
    _settled(resources, acct)


@pytest.mark.parametrize("page", ["/missing", "/empty", "/to-private"])
def test_a_page_that_404s_or_has_no_product_fails_with_credits_released(
    page: str, client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=20)
    with shop() as base:
        r = client.post(
            "/api/v2/ad-pack",
            json={"url": f"{base}{page}", "include_video": False},
            headers=acct.key_headers,
        )
        assert r.status_code == 202, r.text
        body = _poll(client, acct, f"/api/v2/ad-pack/{r.json()['job_id']}")
    assert body["status"] == "failed"
    expected = {"/missing": "HTTP 404", "/empty": "no product", "/to-private": "private"}
    assert expected[page] in body["error"], body["error"]
    assert body["credits_used"] == 0 and body["product"] is None
    assert balance_of(resources, acct.id) == 20
    _settled(resources, acct)


def test_private_addresses_are_refused_as_image_urls_are(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=20)
    for url in ("http://10.0.0.1/product", "http://169.254.169.254/latest/meta-data/"):
        pack = client.post(
            "/api/v2/ad-pack", json={"url": url, "include_video": False}, headers=acct.key_headers
        )
        image = client.post(
            "/api/v2/generate/scenes-from-url",
            json={"image_url": url, "num_scenes": 1},
            headers=acct.key_headers,
        )
        assert pack.status_code == image.status_code and 400 <= pack.status_code < 500
        assert pack.json()["detail"] == image.json()["detail"]
        assert "not allowed" in pack.json()["detail"] or "refused" in pack.json()["detail"]
    assert balance_of(resources, acct.id) == 20
    nothing = client.post(
        "/api/v2/ad-pack",
        json={
            "url": "http://127.0.0.1:9/p",
            "include_images": False,
            "include_ads": False,
            "include_captions": False,
            "include_video": False,
        },
        headers=acct.key_headers,
    )
    assert nothing.status_code == 422
    assert client.get("/api/v2/ad-pack/999999", headers=acct.key_headers).status_code == 404
