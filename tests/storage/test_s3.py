"""Object storage: the protocol's behaviour on both backends (local disk and an S3 protocol
server), and the S3 backend end to end: a synchronous result and a product upload stored in
the bucket and served through the signed /files/... routes."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from fastapi.testclient import TestClient
from pydantic import ValidationError

from pixelmill.app import create_app
from pixelmill.config import Settings
from pixelmill.resources import Resources, build_resources
from pixelmill.storage import LocalStorage, ObjectStorage
from pixelmill.storage.factory import build_storage
from pixelmill.storage.s3 import S3Storage, StorageUnavailable, make_client
from pixelmill.worker import wire
from tests.support.accounts import make_account
from tests.support.images import png_bytes
from tests.support.s3 import REGION, list_names
from tests.support.servers import client_for
from tests.support.settings import make_settings

PNG = png_bytes(24, 16)


@pytest.fixture(params=["local", "s3"])
def stores(
    request: pytest.FixtureRequest, tmp_path: Path, s3_endpoint: str, s3_bucket: str
) -> tuple[ObjectStorage, ObjectStorage]:
    """Two stores of one backend, as the server builds them (results and library)."""
    if request.param == "local":
        return LocalStorage(tmp_path / "files"), LocalStorage(tmp_path / "library")
    client = make_client(s3_endpoint, REGION)
    return S3Storage(client, s3_bucket, "files/"), S3Storage(client, s3_bucket, "library")


def test_put_get_delete_and_missing_keys(stores: tuple[ObjectStorage, ObjectStorage]) -> None:
    files, library = stores
    files.check()
    files.put("results/abc123.png", PNG, "image/png")
    got = files.get("results/abc123.png")
    assert got is not None and got.data == PNG and got.content_type == "image/png"
    files.put("results/abc123.png", b"{}", "application/json")  # overwrite in place
    again = files.get("results/abc123.png")
    assert again is not None and again.data == b"{}"

    assert library.get("results/abc123.png") is None  # the other store does not see it
    assert files.get("results/missing.png") is None
    for bad in ("../secret.png", "/etc/passwd", "results/a b.png", "results/..png", "é.png"):
        assert files.get(bad) is None
        files.delete(bad)  # nothing happens
        with pytest.raises(ValueError, match="invalid storage key"):
            files.put(bad, PNG, "image/png")

    files.delete("results/abc123.png")
    assert files.get("results/abc123.png") is None
    files.delete("results/abc123.png")  # deleting a missing key is fine


def test_delete_older_than_honours_the_cutoff_and_the_store(
    stores: tuple[ObjectStorage, ObjectStorage],
) -> None:
    files, library = stores
    for i in range(3):
        files.put(f"results/r{i}.jpg", PNG, "image/jpeg")
    library.put("products/p1.png", PNG, "image/png")
    written = datetime.now(UTC)
    assert files.delete_older_than(written - timedelta(minutes=5)) == 0
    assert files.get("results/r0.jpg") is not None

    assert files.delete_older_than(written + timedelta(seconds=5)) == 3
    assert all(files.get(f"results/r{i}.jpg") is None for i in range(3))
    assert library.get("products/p1.png") is not None  # library images outlive results
    assert files.delete_older_than(written + timedelta(seconds=5)) == 0


def test_s3_store_uses_its_prefix_in_the_bucket(s3_endpoint: str, s3_bucket: str) -> None:
    client = make_client(s3_endpoint, REGION)
    S3Storage(client, s3_bucket, "site-a/files/").put("results/x1.webp", PNG, "image/webp")
    S3Storage(client, s3_bucket, "site-a/library").put("products/y2.png", PNG, "image/png")
    assert list_names(s3_endpoint, s3_bucket) == [
        "site-a/files/results/x1.webp",
        "site-a/library/products/y2.png",
    ]


def test_s3_errors_are_503_not_500(s3_endpoint: str, tmp_path: Path) -> None:
    missing = S3Storage(make_client(s3_endpoint, REGION), "no-such-bucket-here", "files/")
    with pytest.raises(StorageUnavailable) as caught:
        missing.put("results/a1.png", PNG, "image/png")
    assert caught.value.status_code == 503 and caught.value.headers["Retry-After"]
    with pytest.raises(ClientError):  # readiness reports it
        missing.check()
    nobody = S3Storage(make_client("http://127.0.0.1:9", REGION), "b", "files/")
    started = time.monotonic()
    with pytest.raises(StorageUnavailable):
        nobody.get("results/a1.png")
    assert time.monotonic() - started < 30  # refused connections are not retried for long


def test_settings_refuse_s3_without_a_bucket(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="PIXELMILL_S3_BUCKET"):
        Settings(storage="s3", data_dir=tmp_path)
    with pytest.raises(ValidationError, match="PIXELMILL_S3_PREFIX"):
        Settings(storage="s3", s3_bucket="b", s3_prefix="/x", data_dir=tmp_path)
    local = Settings(data_dir=tmp_path)  # PIXELMILL_STORAGE unset: local disk, as before
    assert local.storage == "local"
    files = build_storage(local, "files")
    assert isinstance(files, LocalStorage) and files.root == local.storage_dir


@pytest.fixture
def s3_resources(
    database_url: str, tmp_path: Path, s3_endpoint: str, s3_bucket: str
) -> Iterator[Resources]:
    settings = make_settings(
        database_url,
        tmp_path / "data",
        storage="s3",
        s3_bucket=s3_bucket,
        s3_endpoint_url=s3_endpoint,
        s3_region=REGION,
        s3_prefix="node/",
        analyze_products=False,
    )
    res = wire(build_resources(settings))
    yield res
    res.close()


def _fetch(client: TestClient, url: str) -> bytes:
    r = client.get(url)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("image/")
    content: bytes = r.content
    return content


def test_results_and_library_images_through_s3(
    s3_resources: Resources, s3_endpoint: str, s3_bucket: str
) -> None:
    res = s3_resources
    acct = make_account(res, credits=5)
    image = base64.b64encode(png_bytes(40, 30)).decode()
    with client_for(create_app(res.settings, res)) as client:
        ready = client.get("/readyz").json()
        assert ready["dependencies"]["object_storage"] == {"status": "ok", "required": True}

        r = client.post("/api/v2/convert", json={"image_base64": image}, headers=acct.key_headers)
        assert r.status_code == 200, r.text
        result_url = r.json()["result_url"]
        assert "/files/results/" in result_url
        assert _fetch(client, result_url)[:8] == b"\x89PNG\r\n\x1a\n"

        r = client.post(
            "/api/v2/products",
            json={"image": image, "filename": "bottle.png"},
            headers=acct.key_headers,
        )
        assert r.status_code == 201, r.text
        product_url = r.json()["image_url"]
        assert "/files/library/" in product_url
        assert _fetch(client, product_url)[:8] == b"\x89PNG\r\n\x1a\n"

        names = list_names(s3_endpoint, s3_bucket)
        result_key = result_url.split("/files/")[1].split("?")[0]
        library_key = product_url.split("/files/library/")[1].split("?")[0]
        assert f"node/files/{result_key}" in names
        assert f"node/library/{library_key}" in names
        data_dir = res.settings.data_dir
        assert not (data_dir / "files").exists() and not (data_dir / "library").exists()

        # A tampered signature is still refused before S3 is asked.
        assert client.get(result_url.replace("sig=", "sig=0")).status_code == 404

        # Expiry: the sweep deletes results older than the TTL, never library images.
        ttl = timedelta(hours=res.settings.result_ttl_hours)
        later = datetime.now(UTC) + ttl + timedelta(seconds=5)
        assert res.pipeline.results.delete_expired(later - ttl) >= 1
        assert client.get(result_url).status_code == 404
        assert _fetch(client, product_url)
        assert f"node/library/{library_key}" in list_names(s3_endpoint, s3_bucket)


def test_readyz_is_503_when_the_bucket_is_gone(
    s3_resources: Resources, s3_endpoint: str, s3_bucket: str
) -> None:
    client = make_client(s3_endpoint, REGION)
    for name in list_names(s3_endpoint, s3_bucket):
        client.delete_object(Bucket=s3_bucket, Key=name)
    client.delete_bucket(Bucket=s3_bucket)
    with client_for(create_app(s3_resources.settings, s3_resources)) as app_client:
        r = app_client.get("/readyz")
    assert r.status_code == 503
    body = r.json()
    assert body["status"] == "unavailable"
    assert body["dependencies"]["object_storage"]["status"] == "down"
    assert "object_storage" in body["detail"]


def test_readyz_answers_quickly_when_s3_is_unreachable(database_url: str, tmp_path: Path) -> None:
    settings = make_settings(
        database_url,
        tmp_path / "data",
        storage="s3",
        s3_bucket="anything",
        s3_endpoint_url="http://127.0.0.1:9",  # nothing listens on the discard port
        s3_region=REGION,
    )
    res = wire(build_resources(settings))
    # "Quickly" as behaviour, not wall time (a loaded CI machine once took 7.8 s where 0.4 is
    # usual): each store's probe sends one HeadBucket, no retry, with short timeouts.
    sent: list[str] = []
    for store in (res.storage, res.library_storage):
        assert isinstance(store, S3Storage)
        config: Any = store.probe.meta.config
        assert config.connect_timeout <= 1 and config.read_timeout <= 2
        store.probe.meta.events.register(
            "before-send.s3.HeadBucket", lambda request, **_: sent.append(request.url)
        )
    try:
        with client_for(create_app(settings, res)) as client:
            r = client.get("/readyz")
    finally:
        res.close()
    assert r.status_code == 503, r.text
    assert r.json()["dependencies"]["object_storage"]["status"] == "down"
    assert len(sent) == 2  # one attempt for the results store, one for the library's
