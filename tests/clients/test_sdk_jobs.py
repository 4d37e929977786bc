"""The ``pixelpanda`` SDK from PyPI, unchanged, against a live pixelmill: ``upload_product()``
then ``generate_scenes(uuid, num_scenes=3, wait=True)`` gets a ``completed`` job with 3
downloadable results, on the in-process queue and on Celery (real Redis, a real worker)."""

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
from tests.images import png_bytes
from tests.jobs.helpers import job_settings
from tests.queue.workers import celery_workers
from tests.support import (
    IN_CI,
    REDIS_URL,
    balance_of,
    live_server,
    make_account,
    require_service,
)

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
    resources = build_resources(settings)
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
    resources = build_resources(settings)
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
