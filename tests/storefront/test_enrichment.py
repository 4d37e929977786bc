"""Enrichment jobs through a live server: five products served over HTTP get descriptions,
tags, alt text and background-removed images, each (product, enrichment) charged once at its
catalog price; unfetchable images fail their products and release their credits; the job's
activity and webhook follow; DELETE removes the job and its files."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import httpx
from fastapi import FastAPI
from PIL import Image
from sqlalchemy import select

from pixelmill.db.models import Job, JobResult
from pixelmill.resources import Resources
from tests.storefront.helpers import ACTIVITIES, COLOURS, JOBS, SHOP, image_server, png, wait_job
from tests.support.accounts import make_account
from tests.support.credits import balance_of, held_reservations, ledger_consistent
from tests.support.servers import live_server
from tests.support.waiting import wait_until
from tests.support.webhooks import webhook_receiver


def test_five_products_are_enriched_charged_logged_and_deleted(
    app: FastAPI, resources: Resources
) -> None:
    acct = make_account(resources, credits=100)
    routes = {f"/{name}.png": png(rgb) for name, rgb in COLOURS.items()}
    with (
        image_server(routes) as images,
        webhook_receiver() as hook,
        live_server(app) as base,
        httpx.Client(base_url=base, timeout=30) as http,
    ):
        products = [
            {
                "id": f"gid://shopify/Product/{i}",
                "title": f"{name.title()} Water Bottle",
                "description": "<p>Keeps drinks cold.</p>",
                "tags": ["bottle"],
                "image_url": f"{images}/{name}.png",
            }
            for i, name in enumerate(COLOURS)
        ]
        r = http.post(
            JOBS,
            json={
                "shop_domain": "Demo.MyShopify.com",
                "products": products,
                "enrichments": ["description", "tags", "alt_text", "images"],
                "webhook_url": hook.url,
            },
            headers=acct.key_headers,
        )
        assert r.status_code == 200, r.text
        created = r.json()
        # 5 products x (3 text fields + 1 background removal), 1 credit each.
        assert created["credits_reserved"] == 20 and created["credits_remaining"] == 80
        assert isinstance(created["job_id"], int) and created["products_total"] == 5
        job = wait_job(http, acct, created["job_id"])

        assert job["status"] == "completed", job
        assert job["shop_domain"] == SHOP
        assert (job["products_completed"], job["products_failed"]) == (5, 0)
        assert job["credits_used"] == 20 and job["credits_reserved"] == 20
        for product, (name, _) in zip(job["results"], COLOURS.items(), strict=True):
            assert product["status"] == "completed" and not product["errors"]
            assert product["description"].startswith(f"{name.title()} Water Bottle.")
            assert "Keeps drinks cold." in product["description"]
            assert "<p>" not in product["description"]
            assert name in product["description"], product["description"]
            assert product["tags"][0] == "bottle" and name in product["tags"]
            assert product["alt_text"].startswith(f"{name.title()} Water Bottle in {name}")
            assert "white background" in product["alt_text"]
            assert "no language model" in product["method"]
            assert product["credits_used"] == 4
            (image,) = product["images"]
            assert image["operation"] == "remove_background"
            got = http.get(image["url"])
            assert got.status_code == 200
            cutout = Image.open(io.BytesIO(got.content))
            assert cutout.mode == "RGBA"
            alpha = cutout.getchannel("A")
            assert alpha.getpixel((2, 2)) == 0 and alpha.getpixel((120, 140)) == 255
        assert json.loads(job["results_json"])[0]["id"] == products[0]["id"]

        assert balance_of(resources, acct.id) == 80
        assert held_reservations(resources, acct.id) == 0
        assert ledger_consistent(resources, acct.id)

        # The activity was logged with every product's changes.
        activity = http.get(f"{ACTIVITIES}/{job['activity_id']}", headers=acct.key_headers)
        assert activity.status_code == 200
        logged = activity.json()
        assert logged["activity_type"] == "enrichment" and logged["status"] == "completed"
        assert logged["job_id"] == job["job_id"] and logged["credits_used"] == 20
        assert logged["products_count"] == 5
        changes = {c["field"]: c for c in logged["products"][0]["changes"]}
        assert set(changes) == {"description", "tags", "alt_text", "images"}
        assert changes["description"]["before"] == "<p>Keeps drinks cold.</p>"
        assert changes["tags"]["before"] == ["bottle"]

        # The webhook carried the results.
        wait_until(lambda: hook.snapshot(), timeout=30)
        event = json.loads(hook.snapshot()[0].body)
        assert event["event"] == "enrichment_job.completed"
        assert event["job_id"] == job["job_id"] and len(event["results"]) == 5

        # DELETE: the job, its results and its files go.
        with resources.db.read() as session:
            keys = list(
                session.scalars(
                    select(JobResult.key)
                    .join(Job, Job.id == JobResult.job_id)
                    .where(Job.number == job["job_id"])
                )
            )
        assert len(keys) == 20
        assert all(resources.storage.get(k) is not None for k in keys)
        deleted = http.delete(f"{JOBS}/{job['job_id']}", headers=acct.key_headers)
        assert deleted.status_code == 200, deleted.text
        assert deleted.json()["files_deleted"] == 20
        assert http.get(f"{JOBS}/{job['job_id']}", headers=acct.key_headers).status_code == 404
        wait_until(lambda: all(resources.storage.get(k) is None for k in keys), timeout=10)
        assert http.get(image["url"]).status_code == 404
        # The log keeps the activity.
        assert (
            http.get(f"{ACTIVITIES}/{job['activity_id']}", headers=acct.key_headers).status_code
            == 200
        )
    assert balance_of(resources, acct.id) == 80 and ledger_consistent(resources, acct.id)


def test_unfetchable_images_fail_their_products_and_release_their_credits(
    app: FastAPI, resources: Resources
) -> None:
    acct = make_account(resources, credits=50)
    with (
        image_server({"/ok.png": png(COLOURS["blue"]), "/junk.png": b"not an image"}) as images,
        live_server(app) as base,
        httpx.Client(base_url=base, timeout=30) as http,
    ):
        products: list[dict[str, Any]] = [
            {"id": "p-ok", "title": "Blue Bottle", "image_url": f"{images}/ok.png"},
            {"id": "p-missing", "title": "Ghost", "image_url": f"{images}/missing.png"},
            {"id": "p-junk", "title": "Junk", "image_url": f"{images}/junk.png"},
        ]
        r = http.post(
            JOBS,
            json={"shop_domain": SHOP, "products": products, "enrichments": ["alt_text", "images"]},
            headers=acct.key_headers,
        )
        assert r.status_code == 200, r.text
        assert r.json()["credits_reserved"] == 6
        job = wait_job(http, acct, r.json()["job_id"])
    assert job["status"] == "completed"
    assert (job["products_completed"], job["products_failed"]) == (1, 2)
    assert job["credits_used"] == 2
    by_id = {p["id"]: p for p in job["results"]}
    assert by_id["p-ok"]["alt_text"] and len(by_id["p-ok"]["images"]) == 1
    for failed in ("p-missing", "p-junk"):
        product = by_id[failed]
        assert product["status"] == "failed" and product["alt_text"] is None
        assert product["images"] == [] and product["credits_used"] == 0
        assert {e["enrichment"] for e in product["errors"]} == {"alt_text", "remove_background"}
    assert "404" in by_id["p-missing"]["errors"][0]["error"]
    assert balance_of(resources, acct.id) == 48
    assert held_reservations(resources, acct.id) == 0 and ledger_consistent(resources, acct.id)


def test_library_products_with_upscale_and_scenes(app: FastAPI, resources: Resources) -> None:
    acct = make_account(resources, credits=20)
    with live_server(app) as base, httpx.Client(base_url=base, timeout=30) as http:
        saved = http.post(
            "/api/v2/products",
            json={
                "image": base64.b64encode(png(COLOURS["orange"])).decode(),
                "filename": "lamp.png",
                "name": "Orange Lamp",
            },
            headers=acct.key_headers,
        )
        assert saved.status_code == 201, saved.text
        r = http.post(
            JOBS,
            json={
                "shop_domain": SHOP,
                "products": [{"id": "lamp", "product_uuid": saved.json()["uuid"]}],
                "enrichments": ["alt_text", "images"],
                "image_operations": [
                    {"operation": "upscale", "scale": 2},
                    {"operation": "scenes", "count": 2},
                ],
            },
            headers=acct.key_headers,
        )
        assert r.status_code == 200, r.text
        # alt text 1 + upscale 2x 1 + 2 scenes x 1
        assert r.json()["credits_reserved"] == 4
        job = wait_job(http, acct, r.json()["job_id"])
        assert job["status"] == "completed" and job["credits_used"] == 4
        (product,) = job["results"]
        assert product["title"] == "Orange Lamp"
        assert product["alt_text"].startswith("Orange Lamp in orange")
        labels = [i["label"] for i in product["images"]]
        assert labels == ["upscale", "scenes:0", "scenes:1"]
        up = Image.open(io.BytesIO(http.get(product["images"][0]["url"]).content))
        assert up.size == (480, 480)
        scene = Image.open(io.BytesIO(http.get(product["images"][1]["url"]).content))
        assert scene.size == (256, 256)
        # Another account cannot use the product.
        other = make_account(resources, credits=20)
        r = http.post(
            JOBS,
            json={
                "shop_domain": SHOP,
                "products": [{"id": "x", "product_uuid": saved.json()["uuid"]}],
            },
            headers=other.key_headers,
        )
        assert r.status_code == 404 and balance_of(resources, other.id) == 20
    assert balance_of(resources, acct.id) == 16 and ledger_consistent(resources, acct.id)
