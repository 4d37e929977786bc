"""Numeric form fields on the multipart surfaces: a multipart value is always text, so
``-F scale=4`` must mean 4 on every surface, wrong values stay a 422 with ``detail``, and the
OpenAPI document still lists the allowed integers."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from fastapi.testclient import TestClient

from pixelmill.resources import Resources
from tests.support.accounts import make_account
from tests.support.credits import balance_of
from tests.support.images import decode, png_bytes


def _result_size(client: TestClient, body: dict[str, Any]) -> tuple[int, int]:
    url = body.get("result_url") or body.get("image_url")
    assert url, body
    r = client.get(url)
    assert r.status_code == 200, r.text
    size: tuple[int, int] = decode(r.content).size
    return size


@pytest.mark.parametrize(("scale", "credits"), [("2", 1), ("4", 1), ("8", 2), (" 4 ", 1)])
def test_v1_upscale_scale_as_text(
    client: TestClient, resources: Resources, scale: str, credits: int
) -> None:
    acct = make_account(resources, credits=5)
    r = client.post(
        "/api/v1/upscale",
        files={"file": ("p.png", png_bytes(40, 30))},
        data={"scale": scale, "quality": "fast"},
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    factor = int(scale)
    assert r.json()["credits_used"] == credits
    assert decode(base64.b64decode(r.json()["result"])).size == (40 * factor, 30 * factor)
    assert balance_of(resources, acct.id) == 5 - credits


@pytest.mark.parametrize("scale", ["2", "4", "8"])
def test_process_upscale_scale_as_text(
    client: TestClient, resources: Resources, scale: str
) -> None:
    acct = make_account(resources, credits=5)
    r = client.post(
        "/api/process",
        data={"processing_type": "upscale", "scale": scale, "quality": "80"},
        files={"image": ("p.png", png_bytes(40, 30))},
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    assert _result_size(client, r.json()) == (40 * int(scale), 30 * int(scale))


@pytest.mark.parametrize("scale", ["3", "x", "4.0", "16", "-2", "9" * 40])
def test_wrong_scale_is_422_with_detail(
    client: TestClient, resources: Resources, scale: str
) -> None:
    acct = make_account(resources, credits=5)
    r = client.post(
        "/api/v1/upscale",
        files={"file": ("p.png", png_bytes(40, 30))},
        data={"scale": scale},
        headers=acct.key_headers,
    )
    assert r.status_code == 422, r.text
    assert "2, 4 or 8" in r.json()["detail"][0]["msg"]
    r = client.post(
        "/api/process",
        data={"processing_type": "upscale", "scale": scale},
        files={"image": ("p.png", png_bytes(40, 30))},
        headers=acct.key_headers,
    )
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["error_code"] == "VALIDATION_ERROR" and "2, 4 or 8" in body["detail"]
    assert balance_of(resources, acct.id) == 5


def test_other_numeric_form_fields_take_text(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=5)
    # /api/process quality (an int) and face_enhance (a bool) as text
    r = client.post(
        "/api/process",
        data={
            "processing_type": "background_removal",
            "output_format": "webp",
            "quality": "70",
        },
        files={"image": ("p.png", png_bytes(40, 30))},
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    assert decode(client.get(r.json()["result_url"]).content).format == "WEBP"
    r = client.post(
        "/api/process",
        data={"processing_type": "upscale", "scale": "2", "face_enhance": "false"},
        files={"image": ("p.png", png_bytes(40, 30))},
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    r = client.post(
        "/api/process",
        data={"processing_type": "upscale", "quality": "101"},
        files={"image": ("p.png", png_bytes(40, 30))},
        headers=acct.key_headers,
    )
    assert r.status_code == 422 and "quality" in r.json()["detail"]
    # the free upscaler's scale is text by contract ("2" or "4")
    r = client.post(
        "/api/free-tools/image-upscaler/generate",
        data={"scale": "4"},
        files={"image": ("p.png", png_bytes(40, 30))},
    )
    assert r.status_code == 200, r.text
    assert _result_size(client, r.json()) == (160, 120)


def test_openapi_lists_the_allowed_scales(client: TestClient) -> None:
    doc = client.get("/.well-known/openapi.json").json()
    for path in ("/api/v1/upscale", "/api/process"):
        ref = doc["paths"][path]["post"]["requestBody"]["content"]["multipart/form-data"]["schema"]
        body = doc["components"]["schemas"][ref["$ref"].rsplit("/", 1)[-1]]
        assert body["properties"]["scale"]["type"] == "integer"
        assert body["properties"]["scale"]["enum"] == [2, 4, 8]
