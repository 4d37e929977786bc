"""Storefront enrichment: seconds per product (a hand-run benchmark, not a test).

Run: ``.venv/bin/python bench/storefront.py [--products 5] [--size 800]``

Two tables:

1. Each item of an enrichment job alone, on one product photo (median of 3 after a warm-up
   that loads the models): the three text fields (one ``product_text`` run: the ``analyze``
   engine's measurements + composition), ``remove_background``, ``upscale`` 2x, one scene.
2. Whole jobs through the real HTTP surface (in-process queue, SQLite file): ``--products``
   products given as base64 PNGs, for four enrichment sets; time from the create call until
   the job is terminal, divided by the products. Fetching images from URLs is not included
   (it is the network's time).

On a shared machine read the CPU column: the wall column also measures the neighbours.
"""

from __future__ import annotations

import argparse
import base64
import io
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from fastapi.testclient import TestClient
from PIL import Image

from _common import print_table
from pixelmill.accounts import service as accounts
from pixelmill.app import create_app
from pixelmill.config import Settings
from pixelmill.credits import ledger
from pixelmill.db.migrate import upgrade
from pixelmill.engines.base import EngineInputs
from pixelmill.engines.registry import build_engines
from pixelmill.engines.scenes import ScenesParams
from pixelmill.resources import build_resources

COLOURS = [(40, 90, 190), (200, 40, 40), (40, 150, 60), (235, 135, 35), (120, 50, 160)]

SETS: list[tuple[str, dict[str, Any]]] = [
    ("description+tags+alt_text", {"enrichments": ["description", "tags", "alt_text"]}),
    ("+ remove_background", {"enrichments": ["description", "tags", "alt_text", "images"]}),
    (
        "+ remove_background + upscale 2x",
        {
            "enrichments": ["description", "tags", "alt_text", "images"],
            "image_operations": [{"operation": "remove_background"}, {"operation": "upscale"}],
        },
    ),
    (
        "+ remove_background + 1 scene",
        {
            "enrichments": ["description", "tags", "alt_text", "images"],
            "image_operations": [
                {"operation": "remove_background"},
                {"operation": "scenes", "count": 1},
            ],
        },
    ),
]


def photo(colour: tuple[int, int, int], size: int) -> np.ndarray:
    """A product (a bottle with a printed label) on a white backdrop."""
    img = np.full((size, size, 3), 255, np.uint8)
    c, s = size // 2, size / 240
    cv2.rectangle(
        img, (int(c - 35 * s), size // 4), (int(c + 35 * s), size - int(30 * s)), colour, -1
    )
    cv2.rectangle(
        img, (int(c - 14 * s), size // 4 - int(30 * s)), (int(c + 14 * s), size // 4), colour, -1
    )
    cv2.putText(
        img,
        "AQUA",
        (int(c - 30 * s), size // 2),
        cv2.FONT_HERSHEY_SIMPLEX,
        0.8 * s,
        (255, 255, 255),
        max(1, int(2 * s)),
    )
    return img


def b64png(pixels: np.ndarray) -> str:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, "PNG")
    return base64.b64encode(buf.getvalue()).decode()


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def items(size: int) -> list[dict[str, Any]]:
    engines = build_engines()
    image = photo(COLOURS[0], size)
    inputs = EngineInputs(image)
    text = engines["product_text"]
    bg = engines["background_removal"]
    up = engines["upscale"]
    scenes = engines["scenes"]
    calls: dict[str, Callable[[], object]] = {
        "description+tags+alt_text (one product_text run)": lambda: text.run(
            inputs, text.Params.model_validate({"title": "Blue Bottle"})
        ),
        "remove_background": lambda: bg.run(inputs, bg.Params()),
        "upscale 2x": lambda: up.run(inputs, up.Params.model_validate({"scale": 2})),
        "one scene (1024 px)": lambda: scenes.run(inputs, ScenesParams(num_scenes=1, size=1024)),
    }
    rows = []
    for name, fn in calls.items():
        fn()  # warm-up: loads the models
        walls, cpus = zip(*(timed(fn) for _ in range(3)), strict=True)
        rows.append(
            {
                "item": name,
                "wall s (median)": f"{sorted(walls)[1]:.2f}",
                "cpu s (median)": f"{sorted(cpus)[1]:.2f}",
            }
        )
    return rows


def jobs(products: int, size: int) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            env="testing",
            secret_key="bench-" + "x" * 40,
            database_url=f"sqlite:///{tmp}/bench.db",
            data_dir=Path(tmp) / "data",
            scene_size=1024,
            sweep_interval_seconds=3600,
            analyze_products=False,
        )
        upgrade(settings.resolved_database_url)
        resources = build_resources(settings)
        with resources.db.transaction() as session:
            new = accounts.register(
                session,
                resources.secret,
                f"bench-{uuid.uuid4().hex[:8]}@example.com",
                "bench password",
                free_credits=0,
            )
            ledger.grant(session, new.user.id, 10_000, memo="bench")
            accounts.set_plan(session, new.user, "enterprise")
            headers = {"Authorization": f"Bearer {new.api_key}"}
        body_products = [
            {
                "id": f"p{i}",
                "title": "Blue Bottle",
                "description": "Keeps drinks cold.",
                "image_base64": b64png(photo(COLOURS[i % len(COLOURS)], size)),
            }
            for i in range(products)
        ]
        with TestClient(create_app(settings, resources)) as client:
            for name, extra in SETS:
                cpu0, wall0 = time.process_time(), time.perf_counter()
                r = client.post(
                    "/api/v2/shopify/enrichment-jobs",
                    headers=headers,
                    json={"shop_domain": "bench.myshopify.com", "products": body_products, **extra},
                )
                assert r.status_code == 200, r.text
                url = f"/api/v2/shopify/enrichment-jobs/{r.json()['job_id']}"
                while (job := client.get(url, headers=headers).json())["status"] not in (
                    "completed",
                    "failed",
                ):
                    time.sleep(0.05)
                wall = time.perf_counter() - wall0
                cpu = time.process_time() - cpu0
                assert job["products_completed"] == products, job
                rows.append(
                    {
                        "enrichments": name,
                        "credits/product": job["credits_used"] // products,
                        "wall s/product": f"{wall / products:.2f}",
                        "cpu s/product": f"{cpu / products:.2f}",
                    }
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--products", type=int, default=5)
    parser.add_argument("--size", type=int, default=800, help="side of the product photos, px")
    args = parser.parse_args()
    print(f"## Items, one {args.size}x{args.size} product photo\n")
    print_table(items(args.size))
    print(f"\n## Jobs of {args.products} products ({args.size}x{args.size} PNG, base64)\n")
    print_table(jobs(args.products, args.size))


if __name__ == "__main__":
    main()
