"""The pipeline through its surfaces: v2 JSON, v1 multipart, /api/process, free tools, files.

Real engines, real images, a real loopback HTTP server for URL inputs; every failure path is
checked to leave the balance unchanged."""

from __future__ import annotations

import base64
from typing import ClassVar

import numpy as np
import pytest
from fastapi.testclient import TestClient
from pydantic import BaseModel

from pixelmill.engines.base import EngineError, EngineInputs, EngineResult
from pixelmill.resources import Resources
from tests.support.accounts import make_account
from tests.support.credits import balance_of
from tests.support.images import decode, encode, jpeg_bytes, png_bytes, product_rgb
from tests.support.servers import serve_bytes


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def fetch(client: TestClient, url: str) -> bytes:
    r = client.get(url)
    assert r.status_code == 200, r.text
    content: bytes = r.content
    return content


def test_v2_convert_to_jpeg_flattens_alpha(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=5)
    rgba = np.zeros((40, 60, 4), np.uint8)
    rgba[..., 0] = 255
    rgba[..., 3] = 128  # half-transparent red over white -> pink
    r = client.post(
        "/api/v2/convert",
        json={"image_base64": b64(encode(rgba)), "format": "jpg", "quality": 95},
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "success"
    assert body["credits_used"] == 1 and body["credits_remaining"] == 4
    assert body["result_url"].startswith("http://testserver/files/results/")
    assert "alpha composited onto white" in body["details"]["method"]
    im = decode(fetch(client, body["result_url"]))
    assert im.format == "JPEG" and im.size == (60, 40)
    r_, g_, b_ = np.asarray(im.convert("RGB"))[20, 30]
    assert r_ > 240 and 110 < g_ < 150 and 110 < b_ < 150
    assert balance_of(resources, acct.id) == 4


def test_v2_remove_background_from_url(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=3)
    with serve_bytes({"/bottle.png": (200, "image/png", png_bytes())}) as base:
        r = client.post(
            "/api/v2/remove-background",
            json={"image_url": f"{base}/bottle.png"},
            headers=acct.key_headers,
        )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["credits_used"] == 1 and body["credits_remaining"] == 2
    assert body["details"]["method"]
    im = decode(fetch(client, body["result_url"]))
    assert im.format == "PNG" and im.mode == "RGBA" and im.size == (320, 240)
    alpha = np.asarray(im)[..., 3]
    assert alpha[5, 5] < 20 and alpha[150, 160] > 230  # corner gone, bottle kept


def test_both_inputs_prefers_base64(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=3)
    r = client.post(
        "/api/v2/convert",
        json={"image_base64": b64(png_bytes(50, 30)), "image_url": "http://10.0.0.1/x.png"},
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    assert r.json()["details"]["width"] == 50


@pytest.mark.parametrize(
    ("payload", "status"),
    [
        ({"image_url": "http://10.1.2.3/a.png"}, 400),
        ({"image_url": "http://169.254.169.254/latest/meta-data"}, 400),
        ({"image_url": "file:///etc/passwd"}, 400),
        ({"image_url": "ftp://example.com/a.png"}, 400),
        ({"image_base64": "!!!not base64!!!"}, 400),
        ({"image_base64": b64(b"GIF89a" + b"\x00" * 64)}, None),
        ({"image_base64": b64(png_bytes()[:200])}, None),
        ({"image_base64": b64(b"")}, None),
        ({}, 422),
    ],
)
def test_bad_inputs_cost_nothing(
    client: TestClient, resources: Resources, payload: dict[str, str], status: int | None
) -> None:
    acct = make_account(resources, credits=3)
    r = client.post("/api/v2/remove-background", json=payload, headers=acct.key_headers)
    assert 400 <= r.status_code < 500, r.text
    if status is not None:
        assert r.status_code == status
    assert isinstance(r.json()["detail"], str) and r.json()["detail"]
    assert balance_of(resources, acct.id) == 3


def test_refused_url_via_redirect_costs_nothing(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=2)
    routes = {"/r": (302, "text/plain", b"http://10.0.0.7/secret.png")}
    with serve_bytes(routes) as base:
        r = client.post(
            "/api/v2/convert", json={"image_url": f"{base}/r"}, headers=acct.key_headers
        )
    assert r.status_code == 400
    assert balance_of(resources, acct.id) == 2


@pytest.mark.both_databases
def test_insufficient_credits_is_402_and_balance_unchanged(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=0)
    r = client.post(
        "/api/v2/convert", json={"image_base64": b64(png_bytes(20, 20))}, headers=acct.key_headers
    )
    assert r.status_code == 402
    assert r.headers["content-type"].startswith("application/json")
    assert "Insufficient credits" in r.json()["detail"]
    assert balance_of(resources, acct.id) == 0


class _FailingParams(BaseModel):
    format: str = "png"
    quality: int = 90


class _FailingEngine:
    """A real engine that cannot handle any input: the pipeline must refund and answer 4xx."""

    name: ClassVar[str] = "convert"
    Params: ClassVar[type[BaseModel]] = _FailingParams

    def load(self) -> None:
        return

    def validate(self, params: BaseModel) -> None:
        return

    def run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        raise EngineError("this engine rejects every image")


@pytest.mark.both_databases
def test_failed_engine_run_refunds(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=4)
    resources.pipeline.engines = {**resources.pipeline.engines, "convert": _FailingEngine()}
    r = client.post(
        "/api/v2/convert", json={"image_base64": b64(png_bytes(20, 20))}, headers=acct.key_headers
    )
    assert r.status_code == 422
    assert "rejects every image" in r.json()["detail"]
    assert balance_of(resources, acct.id) == 4
    history = client.get("/api/v1/history", headers=acct.key_headers).json()
    assert history["items"][0]["status"] == "failed"
    assert history["items"][0]["credits_used"] == 0


def test_plan_file_size_limit(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=3, plan="free")  # 5 MB
    noise = np.random.default_rng(0).integers(0, 255, (1500, 1500, 3), dtype=np.uint8)
    big = encode(noise)  # incompressible: ~6.7 MB
    assert len(big) > 5 * 1024 * 1024
    r = client.post(
        "/api/v1/remove-background", files={"file": ("a.png", big)}, headers=acct.key_headers
    )
    assert r.status_code == 413
    assert balance_of(resources, acct.id) == 3


def test_v1_remove_background_part_without_content_type(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=2)
    r = client.post(
        "/api/v1/remove-background",
        files={"file": ("image.png", png_bytes())},  # no part content type, like the SDK
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["success"] is True and body["credits_remaining"] == 1
    im = decode(base64.b64decode(body["result"]))
    assert im.mode == "RGBA" and im.size == (320, 240)


def test_filename_is_not_trusted(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=2)
    r = client.post(
        "/api/v1/remove-background",
        files={"file": ("photo.gif", jpeg_bytes(), "image/gif")},
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text  # a JPEG, whatever the name and part type say


def test_process_background_removal_and_failure_body(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=3)
    r = client.post(
        "/api/process",
        data={"processing_type": "background_removal", "output_format": "webp", "quality": "90"},
        files={"image": ("p.png", png_bytes())},
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["success"] is True and body["credits_used"] == 1
    assert body["metadata"] == {
        "original_size": [320, 240],
        "result_size": [320, 240],
        "format": "webp",
    }
    im = decode(fetch(client, body["result_url"]))
    assert im.format == "WEBP" and im.mode == "RGBA"

    r = client.post(
        "/api/process",
        data={"processing_type": "background_removal"},
        files={"image": ("x.bmp", encode(product_rgb(20, 20), "BMP"))},
        headers=acct.key_headers,
    )
    assert 400 <= r.status_code < 500
    body = r.json()
    assert body["success"] is False
    assert body["error_code"] == "INVALID_FORMAT"
    assert "JPEG" in body["details"] and "PNG" in body["details"]
    assert balance_of(resources, acct.id) == 2

    r = client.post(
        "/api/process",
        data={"processing_type": "teleport"},
        files={"image": ("p.png", png_bytes())},
        headers=acct.key_headers,
    )
    assert r.status_code == 422 and r.json()["error_code"] == "INVALID_PROCESSING_TYPE"


def test_result_links_are_signed_and_expire(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=2)
    body = client.post(
        "/api/v2/convert", json={"image_base64": b64(png_bytes(20, 20))}, headers=acct.key_headers
    ).json()
    url = body["result_url"]
    assert client.get(url).status_code == 200
    tampered = url[:-4] + ("0000" if not url.endswith("0000") else "1111")
    assert client.get(tampered).status_code == 404
    key = url.split("/files/")[1].split("?")[0]
    expired = resources.signer.path_for(key, now=1_000_000)
    assert client.get(expired).status_code == 410


@pytest.mark.both_databases
def test_history_newest_first_and_private(client: TestClient, resources: Resources) -> None:
    a = make_account(resources, credits=5)
    b = make_account(resources, credits=5)
    for fmt in ("png", "webp"):
        client.post(
            "/api/v2/convert",
            json={"image_base64": b64(png_bytes(20, 20)), "format": fmt},
            headers=a.key_headers,
        )
    items = client.get("/api/v1/history?limit=10", headers=a.key_headers).json()["items"]
    # The calls, newest first, then the 5 credits granted to the account.
    assert [(i["kind"], i["result_format"]) for i in items] == [
        ("sync", "webp"),
        ("sync", "png"),
        ("grant", None),
    ]
    others = client.get("/api/v1/history", headers=b.key_headers).json()
    assert [(i["kind"], i["credits"]) for i in others["items"]] == [("grant", 5)]


def test_free_tool_daily_limit_counts_successes_only(client: TestClient) -> None:
    bad = client.post(
        "/api/free-tools/background-remover/generate", files={"image": ("a.png", b"nope")}
    )
    assert 400 <= bad.status_code < 500
    remaining = []
    for _ in range(3):
        r = client.post(
            "/api/free-tools/background-remover/generate",
            files={"image": ("a.png", png_bytes(), "image/png")},
        )
        assert r.status_code == 200, r.text
        assert r.json()["image_url"].startswith("http")
        remaining.append(r.json()["remaining"])
    assert remaining == [2, 1, 0]
    r = client.post(
        "/api/free-tools/background-remover/generate",
        files={"image": ("a.png", png_bytes(), "image/png")},
    )
    assert r.status_code == 429
    assert r.headers["content-type"].startswith("application/json")
