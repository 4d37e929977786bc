"""The ``pixelpanda`` SDK and ``pixelpanda-mcp`` from PyPI, unchanged, against a live pixelmill.

SDK: ``upload_product()`` then ``generate_scenes(uuid, num_scenes=3, wait=True)`` gets a
``completed`` job with 3 downloadable results, on the in-process queue and on Celery (real
Redis, a real worker). MCP: upload, list products and avatars, generate scenes, poll
``check_job_status`` until completed, ``list_jobs``."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from pixelmill.app import create_app
from pixelmill.config import Settings
from pixelmill.resources import build_resources
from pixelmill.worker import wire
from tests.queue.workers import celery_workers
from tests.support.accounts import make_account
from tests.support.credits import balance_of
from tests.support.images import png_bytes
from tests.support.servers import live_server
from tests.support.services import IN_CI, REDIS_URL, require_service
from tests.support.settings import job_settings

CLIENT_PY = Path(__file__).resolve().parents[2] / ".venv-clients" / "bin" / "python"

SCRIPT = """
import json, requests
from pixelpanda import PixelPanda
pp = PixelPanda(api_key={key!r}, base_url={base!r})
product = pp.upload_product({path!r})
job = pp.generate_scenes(product["uuid"], num_scenes=3, wait=True, poll_interval=0.5)
sizes = [len(requests.get(r["url"], timeout=60).content) for r in job["results"]]
print(json.dumps({{"product": product, "job": job, "sizes": sizes}}))
"""


def run_sdk(key: str, base: str, path: Path) -> Any:
    if not CLIENT_PY.exists():
        message = f"the client venv is missing ({CLIENT_PY})"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    script = textwrap.dedent(SCRIPT.format(key=key, base=base, path=str(path)))
    proc = subprocess.run(
        [str(CLIENT_PY), "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
        check=False,
    )
    assert proc.returncode == 0, f"SDK failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check(out: Any) -> None:
    assert out["product"]["uuid"]
    job = out["job"]
    assert job["status"] == "completed", job
    assert job["credits_used"] == 3
    assert len(job["results"]) == 3
    assert all(r["scene"] and r["url"].startswith("http://127.0.0.1:") for r in job["results"])
    assert all(size > 1000 for size in out["sizes"])


def test_sdk_generate_scenes_inline(database_url: str, tmp_path: Path) -> None:
    settings = job_settings(database_url, tmp_path / "data")
    resources = wire(build_resources(settings))
    try:
        acct = make_account(resources, credits=10)
        image = tmp_path / "bottle.png"
        image.write_bytes(png_bytes(200, 150))
        with live_server(create_app(settings, resources)) as base:
            out = run_sdk(acct.api_key, base, image)
        check(out)
        assert balance_of(resources, acct.id) == 7
    finally:
        resources.close()


def test_sdk_generate_scenes_celery(database_url: str, tmp_path: Path) -> None:
    parsed = urlparse(REDIS_URL)
    require_service("Redis", parsed.hostname or "127.0.0.1", parsed.port or 6379)
    settings: Settings = job_settings(
        database_url,
        tmp_path / "data",
        queue="celery",
        redis_url=REDIS_URL,
        celery_queue=f"pixelmill-test-{uuid.uuid4().hex[:8]}",
    )
    resources = wire(build_resources(settings))
    try:
        acct = make_account(resources, credits=10)
        image = tmp_path / "bottle.png"
        image.write_bytes(png_bytes(200, 150))
        with (
            celery_workers(settings, tmp_path / "worker.log"),
            live_server(create_app(settings, resources)) as base,
        ):
            out = run_sdk(acct.api_key, base, image)
        check(out)
        assert balance_of(resources, acct.id) == 7
    finally:
        resources.close()


MCP_SCRIPT = """
import asyncio, json, re, time
from pixelpanda_mcp.server import mcp

async def call(name, **args):
    result = await mcp.call_tool(name, args)
    blocks = result[0] if isinstance(result, tuple) else result
    return " ".join(getattr(b, "text", "") for b in blocks)

async def main():
    out = {{}}
    out["upload"] = await call("upload_product", file_path={path!r}, category="beauty")
    uuid = re.search(r"UUID: (\\S+)", out["upload"]).group(1)
    out["products"] = await call("list_products", category="beauty")
    out["avatars"] = await call("list_avatars")
    out["generate"] = await call("generate_scenes", product_uuid=uuid, num_scenes=2)
    job_id = re.search(r"Job ID: (\\S+)", out["generate"]).group(1)
    deadline = time.monotonic() + 120
    while True:
        out["status"] = await call("check_job_status", job_id=job_id)
        if ": completed" in out["status"] or ": failed" in out["status"]:
            break
        assert time.monotonic() < deadline, out["status"]
        await asyncio.sleep(0.3)
    out["jobs"] = await call("list_jobs", limit=5)
    out["uuid"], out["job_id"] = uuid, job_id
    print(json.dumps(out))

asyncio.run(main())
"""


def test_mcp_library_and_scene_job(database_url: str, tmp_path: Path) -> None:
    from tests.clients.harness import run_client

    settings = job_settings(database_url, tmp_path / "data")
    resources = wire(build_resources(settings))
    try:
        acct = make_account(resources, credits=10)
        image = tmp_path / "serum.png"
        image.write_bytes(png_bytes(200, 150))
        with live_server(create_app(settings, resources)) as base:
            out = run_client(
                MCP_SCRIPT.format(path=str(image)),
                env={"PIXELPANDA_API_URL": base, "PIXELPANDA_API_TOKEN": acct.api_key},
            )
    finally:
        resources.close()
    assert "Product uploaded!" in out["upload"] and "Category: beauty" in out["upload"]
    assert out["uuid"] in out["products"] and "serum" in out["products"]
    assert out["avatars"].startswith("No saved avatars")
    assert "Credits reserved: 2" in out["generate"]
    status = out["status"]
    assert f"Job {out['job_id']}: completed" in status
    assert "Credits used: 2" in status and "Generated 2 image(s)" in status
    assert status.count("http://127.0.0.1:") == 2
    assert out["job_id"] in out["jobs"] and "completed" in out["jobs"]
    assert "credits: 2" in out["jobs"]
