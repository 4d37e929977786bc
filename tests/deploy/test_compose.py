"""Issue #45: the compose stack, proven without containers (this project's machines cannot run
them). The structure of ``deploy/compose.yaml`` is checked as Compose reads it; then the
``migrate``, ``api`` and ``worker`` services' own commands run with their own environment
(``deploy/.env.example`` filled in as an operator would, on top of the image's ``ENV``) as local
processes, the service host names mapped to the real PostgreSQL and Redis on 127.0.0.1 and to
moto's S3 server, and a job goes through them: the first account made with the documented
``pixelmill admin create-user``, a product uploaded, a scene job run by the worker, its result
fetched through the API and equal to the object in the bucket.

The mapping is the only change made to what the stack runs, and it is explicit: a URL whose host
is ``db`` becomes a fresh PostgreSQL schema, ``redis`` the local Redis on a database number no
other test uses, ``s3`` the S3 server; the image's data folder a temporary one; the API's port a
free one on loopback (``--host 0.0.0.0`` becomes ``127.0.0.1``).
"""

from __future__ import annotations

import base64
import os
import re
import secrets
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
import httpx
import pytest
import redis

from tests.deploy.files import load_compose, read_dockerfile, service_environment
from tests.deploy.test_setting_names import filled_env
from tests.multinode.cluster import Node, free_port, is_ready
from tests.queue.workers import PIXELMILL
from tests.support.images import png_bytes
from tests.support.s3 import REGION, read_object
from tests.support.services import BACKENDS, REDIS_URL, postgres_schema, require_service
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

SERVICE_HOSTS = ("db", "redis", "s3")
# The stack's Redis databases (broker 0, rate limits 1) -> numbers no other test uses.
REDIS_DBS = {0: 14, 1: 15}
IMAGE_DATA_DIR = "/var/lib/pixelmill"
TERMINAL = ("completed", "failed", "cancelled")


# ---- Compose's view, checked as files ---------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load_compose(filled_env())


def depends(service: dict[str, Any]) -> dict[str, str]:
    return {name: spec["condition"] for name, spec in service.get("depends_on", {}).items()}


def test_the_services_and_their_healthchecks(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert {"api", "worker", "db", "redis", "s3"} <= set(services)
    for name in ("db", "redis", "s3"):
        assert services[name]["healthcheck"]["test"][0] == "CMD", name
    assert "pg_isready" in services["db"]["healthcheck"]["test"]
    # The api's healthcheck is the image's HEALTHCHECK (/healthz); the worker (no HTTP port)
    # has `pixelmill worker-health` (run for real below); the one-shot turns it off.
    assert "healthcheck" not in services["api"]
    assert services["migrate"]["healthcheck"] == {"disable": True}
    worker_check = services["worker"]["healthcheck"]
    assert worker_check["test"][:3] == ["CMD", "pixelmill", "worker-health"], worker_check
    # Data that outlives a container lives in named volumes.
    assert "pgdata:/var/lib/postgresql/data" in services["db"]["volumes"]
    assert "s3data:/data" in services["s3"]["volumes"]
    assert {"pgdata", "s3data"} <= set(compose["volumes"])


def test_api_and_worker_start_after_healthy_services_a_bucket_and_the_migration(
    compose: dict[str, Any],
) -> None:
    services = compose["services"]
    migrate, s3_init = services["migrate"], services["s3-init"]
    assert migrate["command"] == ["migrate"] and migrate["restart"] == "no"
    assert depends(migrate) == {"db": "service_healthy"}
    # The bucket the one-shot creates is the one the server uses.
    api_env = service_environment(services["api"])
    assert "mc mb --ignore-existing" in " ".join(s3_init["command"])
    assert service_environment(s3_init)["S3_BUCKET"] == api_env["PIXELMILL_S3_BUCKET"]
    assert depends(s3_init) == {"s3": "service_healthy"}
    for name in ("api", "worker"):
        assert depends(services[name]) == {
            "db": "service_healthy",
            "redis": "service_healthy",
            "s3": "service_healthy",
            "s3-init": "service_completed_successfully",
            "migrate": "service_completed_successfully",
        }, name
    # One image for the three: built from the repository's Dockerfile.
    for name in ("api", "worker", "migrate"):
        assert services[name]["build"]["context"] == ".."
        assert services[name]["image"] == services["api"]["image"]
        assert service_environment(services[name]) == api_env


def test_the_api_port_is_the_one_published_and_checked(compose: dict[str, Any]) -> None:
    api = compose["services"]["api"]
    port = api["command"][api["command"].index("--port") + 1]
    published = [p for p in api["ports"] if p.endswith(f":{port}")]
    assert published and all(p.startswith("127.0.0.1:") for p in published)
    assert f"127.0.0.1:{port}/healthz" in " ".join(read_dockerfile().final.healthcheck())
    caddy = compose["services"]["caddy"]
    assert caddy["environment"]["UPSTREAM"] == f"api:{port}"
    assert caddy["depends_on"]["api"]["condition"] == "service_healthy"


# ---- the services' commands, run for real --------------------------------------------------------


@dataclass
class Loopback:
    """Where the stack's service host names point on this machine."""

    database_url: str
    redis_host: str
    redis_port: int
    s3_endpoint: str
    data_root: Path

    def value(self, service: str, key: str, value: str) -> str:
        if key == "PIXELMILL_DATA_DIR" and value == IMAGE_DATA_DIR:
            folder = self.data_root / service
            folder.mkdir(parents=True, exist_ok=True)
            return str(folder)
        parts = urlsplit(value)
        if "://" not in value or parts.hostname not in SERVICE_HOSTS:
            return value
        if parts.hostname == "db":
            assert parts.scheme == "postgresql+psycopg" and parts.path == "/pixelmill", value
            return self.database_url
        if parts.hostname == "redis":
            number = REDIS_DBS[int(parts.path.strip("/") or 0)]
            return f"redis://{self.redis_host}:{self.redis_port}/{number}"
        assert parts.scheme == "http" and parts.port == 9000, value
        return self.s3_endpoint


def service_argv(compose: dict[str, Any], name: str) -> list[str]:
    """The container's command line: the image's ENTRYPOINT (``pixelmill`` on the image's
    PATH is the virtual environment's) and the service's command (else the image's CMD)."""
    image = read_dockerfile().final
    service = compose["services"][name]
    entrypoint = service.get("entrypoint") or image.exec_form("ENTRYPOINT")
    command = service.get("command") or image.exec_form("CMD")
    assert entrypoint == ["pixelmill"], entrypoint
    return [str(PIXELMILL), *command]


def service_env(compose: dict[str, Any], name: str, loopback: Loopback) -> dict[str, str]:
    """The image's ENV, then the service's environment, with the host names mapped; the
    outer process's PIXELMILL_* and AWS_* variables left out, as in a container."""
    image_env = {k: v for k, v in read_dockerfile().final.env().items() if not k.startswith("PATH")}
    stack = {**image_env, **service_environment(compose["services"][name])}
    mapped = {key: loopback.value(name, key, value) for key, value in stack.items()}
    leftover = [v for v in mapped.values() if re.search(r"//[^/]*\b(db|redis|s3):", v)]
    assert leftover == [], f"service host names left unmapped: {leftover}"
    outer = {k: v for k, v in os.environ.items() if not k.startswith(("PIXELMILL_", "AWS_"))}
    return {**outer, **mapped}


def replace_option(argv: list[str], option: str, expected: str, value: str) -> list[str]:
    i = argv.index(option)
    assert argv[i + 1] == expected, argv
    return [*argv[: i + 1], value, *argv[i + 2 :]]


def run_healthcheck(env: dict[str, str], port: int) -> bool:
    """The image's HEALTHCHECK command (``python3`` on the image's PATH is the venv's)."""
    check = read_dockerfile().final.healthcheck()
    assert check[0] == "python3"
    argv = [
        str(PIXELMILL.parent / "python3"),
        *(a.replace(":8000/", f":{port}/") for a in check[1:]),
    ]
    return subprocess.run(argv, env=env, capture_output=True, timeout=10).returncode == 0


def run_worker_healthcheck(compose: dict[str, Any], env: dict[str, str]) -> int:
    """The worker service's healthcheck command (``CMD``: run as it is, ``pixelmill`` on the
    image's PATH being the virtual environment's)."""
    test = compose["services"]["worker"]["healthcheck"]["test"]
    assert test[0] == "CMD" and test[1] == "pixelmill", test
    return subprocess.run([str(PIXELMILL), *test[2:]], env=env, timeout=60).returncode


@pytest.fixture
def loopback(s3_endpoint: str, tmp_path: Path) -> Iterator[Loopback]:
    if "postgresql" not in BACKENDS:
        pytest.skip("PIXELMILL_TEST_DATABASES leaves out postgresql: the stack's database")
    redis_url = urlsplit(REDIS_URL)
    host, port = redis_url.hostname or "127.0.0.1", redis_url.port or 6379
    require_service("Redis", host, port)
    dbs = [redis.Redis(host=host, port=port, db=n) for n in REDIS_DBS.values()]
    for db in dbs:
        db.flushdb()  # nothing queued by an earlier run
    with postgres_schema("pm_compose") as url:
        try:
            yield Loopback(url, host, port, s3_endpoint, tmp_path)
        finally:
            for db in dbs:
                db.flushdb()
                db.close()


def create_bucket(env: dict[str, str]) -> str:
    """What the s3-init one-shot does (with ``mc mb --ignore-existing``), with boto3."""
    bucket = env["PIXELMILL_S3_BUCKET"]
    client = boto3.client(
        "s3",
        endpoint_url=env["PIXELMILL_S3_ENDPOINT_URL"],
        region_name=REGION,
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
    )
    existing = {b.get("Name") for b in client.list_buckets().get("Buckets", [])}
    if bucket not in existing:
        client.create_bucket(Bucket=bucket)
    return bucket


def test_the_api_and_worker_services_run_a_job(
    compose: dict[str, Any], loopback: Loopback, tmp_path: Path
) -> None:
    started = time.monotonic()
    env = {name: service_env(compose, name, loopback) for name in ("migrate", "api", "worker")}
    bucket = create_bucket(env["api"])

    migrate = subprocess.run(
        service_argv(compose, "migrate"), env=env["migrate"], capture_output=True, timeout=120
    )
    assert migrate.returncode == 0, migrate.stdout + migrate.stderr
    assert b"database migrated" in migrate.stdout

    port = free_port()
    api_argv = replace_option(service_argv(compose, "api"), "--host", "0.0.0.0", "127.0.0.1")
    api_argv = replace_option(api_argv, "--port", "8000", str(port))
    api = Node("api", api_argv, env["api"], tmp_path / "api.log", port)
    worker = Node("worker", service_argv(compose, "worker"), env["worker"], tmp_path / "w.log")
    api.start()
    worker.start()
    try:
        wait_until(
            lambda: is_ready(api, "api") and run_healthcheck(env["api"], port),
            timeout=90,
            interval=0.3,
        )
        wait_until(lambda: is_ready(worker, "worker"), timeout=90, interval=0.3)
        assert run_worker_healthcheck(compose, env["worker"]) == 0, "worker healthcheck failed"
        ready = time.monotonic()
        key = first_account(env["api"])
        job = run_scene_job(api.url, key)
        assert job["status"] == "completed", job
        assert job["credits_used"] == 1 and len(job["results"]) == 1
        link = job["results"][0]["url"]
        # Links carry the public address from .env (the reverse proxy's), not this port.
        assert link.startswith(env["api"]["PIXELMILL_PUBLIC_BASE_URL"] + "/"), link
        parts = urlsplit(link)
        result = httpx.get(f"{api.url}{parts.path}?{parts.query}", timeout=30)
        assert result.status_code == 200, result.text
        assert result.headers["content-type"].startswith("image/")
        stored = read_object(loopback.s3_endpoint, bucket, parts.path.removeprefix("/"))
        assert result.content == stored
        account = httpx.get(
            f"{api.url}/api/v2/account", headers={"Authorization": f"Bearer {key}"}, timeout=30
        )
        assert account.json()["credits"] == 9  # 10 free credits, 1 scene
    finally:
        api.stop()
        worker.stop()
    # Stopped cleanly by SIGTERM (what `docker compose stop` and systemd send), within the
    # wait: uvicorn finishes its shutdown, then ends by the signal it was sent (a clean stop to
    # Docker and systemd alike); the Celery worker makes its warm shutdown.
    assert api.proc is not None and api.proc.returncode in (0, -signal.SIGTERM)
    assert "Application shutdown complete." in api.log_text()
    assert worker.proc is not None and worker.proc.returncode == 0, worker.log_text()[-3000:]
    assert "Warm shutdown" in worker.log_text()
    print(
        f"[compose] migrate + start {ready - started:.1f} s, "
        f"job and stop {time.monotonic() - ready:.1f} s"
    )


def first_account(api_env: dict[str, str]) -> str:
    """docs/deploy.md's first account: ``docker compose exec api pixelmill admin create-user``
    (and ``admin set-plan``)."""
    made = subprocess.run(
        [str(PIXELMILL), "admin", "create-user", "ops@example.com"],
        env=api_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    match = re.search(r"^api key:\s+(\S+)$", made.stdout, re.MULTILINE)
    assert match, made.stdout
    # The free plan's 10 requests a minute would throttle the polling below; the docs' next
    # step moves the operator's own account to another plan.
    plan = subprocess.run(
        [str(PIXELMILL), "admin", "set-plan", "ops@example.com", "pro"],
        env=api_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert plan.returncode == 0, plan.stdout + plan.stderr
    return match[1]


def run_scene_job(base: str, key: str) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {key}"}
    image = base64.b64encode(png_bytes(160, 120)).decode()
    product = httpx.post(
        f"{base}/api/v2/products",
        json={"image": image, "filename": "bottle.png"},
        headers=headers,
        timeout=60,
    )
    assert product.status_code in (200, 201), product.text
    created = httpx.post(
        f"{base}/api/v2/generate/scenes",
        json={"product_uuid": product.json()["uuid"], "num_scenes": 1},
        headers={**headers, "Idempotency-Key": secrets.token_hex(8)},
        timeout=60,
    )
    assert created.status_code == 202, created.text
    job_url = f"{base}/api/v2/jobs/{created.json()['job_id']}"

    def finished() -> dict[str, Any] | None:
        answer = httpx.get(job_url, headers=headers, timeout=30)
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body if body["status"] in TERMINAL else None

    job: dict[str, Any] = wait_until(finished, timeout=60, interval=0.2)
    return job
