"""``pixelpanda-mcp`` from PyPI, unchanged, against a live server: ``list_avatars`` shows an
avatar made by ``POST /api/v2/generate/avatar``; ``generate_product_photo`` and
``generate_tryon`` start jobs that ``check_job_status`` follows to ``completed``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import httpx
import numpy as np

from pixelmill.app import create_app
from pixelmill.resources import build_resources
from pixelmill.worker import wire
from tests.clients.harness import run_client
from tests.support.accounts import make_account
from tests.support.credits import balance_of
from tests.support.images import encode
from tests.support.servers import live_server
from tests.support.settings import job_settings
from tests.support.waiting import wait_until

SCRIPT = """
import asyncio, json, re, time
from pixelpanda_mcp.server import mcp

async def call(name, **args):
    result = await mcp.call_tool(name, args)
    blocks = result[0] if isinstance(result, tuple) else result
    return " ".join(getattr(b, "text", "") for b in blocks)

async def wait(job_id):
    deadline = time.monotonic() + 180
    while True:
        status = await call("check_job_status", job_id=job_id)
        if ": completed" in status or ": failed" in status:
            return status
        assert time.monotonic() < deadline, status
        await asyncio.sleep(0.3)

async def main():
    out = {{}}
    out["upload"] = await call("upload_product", file_path={path!r}, category="clothing")
    product = re.search(r"UUID: (\\S+)", out["upload"]).group(1)
    out["avatars"] = await call("list_avatars")
    avatar = re.search(r"uuid: ([0-9a-f-]+)", out["avatars"]).group(1)
    for tool in ("generate_product_photo", "generate_tryon"):
        started = await call(tool, avatar_uuid=avatar, product_uuid=product, num_outputs=1)
        job_id = re.search(r"Job ID: (\\S+)", started).group(1)
        out[tool] = started
        out[tool + "_status"] = await wait(job_id)
    print(json.dumps(out))

asyncio.run(main())
"""


def _shirt(path: Path) -> None:
    img = np.full((360, 360, 3), 255, np.uint8)
    outline = np.array(
        [
            [110, 50],
            [250, 50],
            [330, 120],
            [295, 155],
            [265, 130],
            [265, 330],
            [95, 330],
            [95, 130],
            [65, 155],
            [30, 120],
        ],
        np.int32,
    )
    cv2.fillPoly(img, [outline], (30, 90, 200), lineType=cv2.LINE_AA)
    path.write_bytes(encode(img, "PNG"))


def test_mcp_avatar_product_photo_and_tryon(database_url: str, tmp_path: Path) -> None:
    settings = job_settings(database_url, tmp_path / "data")
    resources = wire(build_resources(settings))
    try:
        acct = make_account(resources, credits=10)
        shirt = tmp_path / "shirt.png"
        _shirt(shirt)
        with live_server(create_app(settings, resources)) as base:
            headers = {"Authorization": f"Bearer {acct.api_key}"}
            created = httpx.post(
                base + "/api/v2/generate/avatar",
                json={"prompt": "a man with short brown hair, grey t-shirt", "name": "Sam"},
                headers=headers,
                timeout=120,  # httpx's 5 s default: creating the job timed out on a slow CI machine
            ).json()

            def avatar_done() -> dict[str, Any] | None:
                job: dict[str, Any] = httpx.get(
                    created["poll_url"], headers=headers, timeout=60
                ).json()
                return job if job["status"] in ("completed", "failed") else None

            assert wait_until(avatar_done, timeout=120, interval=0.3)["status"] == "completed"
            out = run_client(
                SCRIPT.format(path=str(shirt)),
                env={"PIXELPANDA_API_URL": base, "PIXELPANDA_API_TOKEN": acct.api_key},
            )
        assert "You have 1 avatar(s)" in out["avatars"] and "Sam" in out["avatars"]
        for tool in ("generate_product_photo", "generate_tryon"):
            assert "Credits reserved: 1" in out[tool], out[tool]
            status = out[tool + "_status"]
            assert ": completed" in status and "Generated 1 image(s)" in status, status
        assert balance_of(resources, acct.id) == 10 - 1 - 2
    finally:
        resources.close()
