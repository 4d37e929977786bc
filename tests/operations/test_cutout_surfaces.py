"""The cut-out output controls through the HTTP surfaces: v2 JSON, v1 multipart and
``/api/process``. Real engines and images; a refused combination costs nothing."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from pixelmill.resources import Resources
from tests.support.accounts import make_account
from tests.support.credits import balance_of
from tests.support.images import decode, encode, photo_rgb, png_bytes
from tests.support.servers import serve_bytes


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def fetch(client: TestClient, url: str) -> bytes:
    r = client.get(url)
    assert r.status_code == 200, r.text
    content: bytes = r.content
    return content


def test_v2_amazon_preset_gives_a_white_2000_square_jpeg(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=3)
    r = client.post(
        "/api/v2/remove-background",
        json={"image_base64": b64(png_bytes()), "preset": "amazon"},
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["credits_used"] == 1 and body["credits_remaining"] == 2  # price unchanged
    assert body["details"]["preset"] == "amazon" and body["details"]["format"] == "jpeg"
    im = decode(fetch(client, body["result_url"]))
    assert im.format == "JPEG" and im.size == (2000, 2000)
    pixels = np.asarray(im.convert("RGB"))
    assert (pixels[:60] == 255).all() and (pixels[:, :60] == 255).all()
    assert (pixels[-60:] == 255).all() and (pixels[:, -60:] == 255).all()


def test_v2_background_photo_by_url_and_exact_size(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=3)
    backdrop = np.zeros((90, 120, 3), np.uint8)
    backdrop[...] = (20, 160, 90)
    with serve_bytes({"/bg.png": (200, "image/png", encode(backdrop))}) as base:
        r = client.post(
            "/api/v2/remove-background",
            json={
                "image_base64": b64(png_bytes()),
                "bg_image_url": f"{base}/bg.png",
                "size": "640x480",
                "scale": "80%",
                "format": "png",
            },
            headers=acct.key_headers,
        )
    assert r.status_code == 200, r.text
    im = decode(fetch(client, r.json()["result_url"]))
    assert im.format == "PNG" and im.mode == "RGB" and im.size == (640, 480)
    assert tuple(np.asarray(im)[3, 3]) == (20, 160, 90)


def test_v2_alpha_channel_is_a_greyscale_png(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=3)
    common: dict[str, Any] = {"image_base64": b64(png_bytes()), "crop": True, "crop_margin": "20px"}
    rgba = client.post("/api/v2/remove-background", json=common, headers=acct.key_headers)
    alpha = client.post(
        "/api/v2/remove-background", json={**common, "channels": "alpha"}, headers=acct.key_headers
    )
    assert rgba.status_code == 200 and alpha.status_code == 200, alpha.text
    full = decode(fetch(client, rgba.json()["result_url"]))
    matte = decode(fetch(client, alpha.json()["result_url"]))
    assert full.mode == "RGBA" and matte.format == "PNG" and matte.mode == "L"
    assert np.array_equal(np.asarray(matte), np.asarray(full)[..., 3])


def test_v2_format_auto_and_the_older_output_format(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=5)
    image = b64(png_bytes())
    opaque = client.post(
        "/api/v2/remove-background",
        json={"image_base64": image, "bg_color": "#fff", "quality": 80},
        headers=acct.key_headers,
    )
    transparent = client.post(
        "/api/v2/remove-background", json={"image_base64": image}, headers=acct.key_headers
    )
    legacy = client.post(
        "/api/v2/make-transparent",
        json={"image_base64": image, "output_format": "webp"},
        headers=acct.key_headers,
    )
    formats = [
        decode(fetch(client, r.json()["result_url"])).format for r in (opaque, transparent, legacy)
    ]
    assert formats == ["JPEG", "PNG", "WEBP"]
    replaced = client.post(
        "/api/v2/replace-background",
        json={"image_base64": image, "prompt": "marble", "format": "webp"},
        headers=acct.key_headers,
    )
    assert replaced.status_code == 200, replaced.text
    assert decode(fetch(client, replaced.json()["result_url"])).format == "WEBP"
    assert balance_of(resources, acct.id) == 5 - 3 - 2


@pytest.mark.parametrize(
    ("payload", "named"),
    [
        ({"channels": "alpha", "bg_color": "ffffff"}, "bg_color"),
        ({"bg_color": "white", "bg_image_url": "http://127.0.0.1:9/bg.png"}, "bg_image_url"),
        ({"channels": "alpha", "preset": "amazon"}, "preset"),
        ({"output_format": "webp", "format": "png"}, "output_format"),
        ({"size": "99999x2"}, "size"),
        ({"bg_color": "not-a-colour"}, "bg_color"),
        ({"scale": "5%"}, "scale"),
    ],
)
def test_v2_conflicts_are_a_422_that_costs_nothing(
    client: TestClient, resources: Resources, payload: dict[str, Any], named: str
) -> None:
    acct = make_account(resources, credits=2)
    r = client.post(
        "/api/v2/remove-background",
        json={"image_base64": b64(png_bytes()), **payload},
        headers=acct.key_headers,
    )
    assert r.status_code == 422, r.text
    assert named in str(r.json()["detail"])
    assert balance_of(resources, acct.id) == 2


def test_v1_form_fields(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=3)
    r = client.post(
        "/api/v1/remove-background",
        files={"file": ("photo.jpg", encode(photo_rgb(300, 200), "JPEG"))},
        data={"size": "300x300", "scale": "80%", "bg_color": "ffffff", "add_shadow": "true"},
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    im = decode(base64.b64decode(body["result"]))
    assert im.format == "JPEG" and im.size == (300, 300)
    assert body["details"]["shadow"].startswith("soft")
    assert body["credits_remaining"] == 2

    refused = client.post(
        "/api/v1/remove-background",
        files={"file": ("photo.png", png_bytes())},
        data={"channels": "alpha", "shadow": "hard"},
        headers=acct.key_headers,
    )
    assert refused.status_code == 422
    assert "channels=alpha" in str(refused.json()["detail"])
    assert balance_of(resources, acct.id) == 2


def test_process_form_fields(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=3)
    r = client.post(
        "/api/process",
        data={
            "processing_type": "background_removal",
            "size": "400x300",
            "subject_scale": "50%",
            "position": "0% 100%",
            "bg_color": "black",
        },
        files={"image": ("p.png", png_bytes())},
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["metadata"]["result_size"] == [400, 300] and body["metadata"]["format"] == "jpeg"
    x, y, _, h = body["details"]["subject_box"]
    assert x <= 3 and abs(y + h - 300) <= 3 and abs(h - 150) <= 3

    for data, named in (
        ({"channels": "alpha", "bg_color": "red"}, "bg_color"),
        ({"output_format": "webp", "format": "png"}, "output_format"),
        ({"subject_scale": "200%"}, "subject_scale"),
    ):
        refused = client.post(
            "/api/process",
            data={"processing_type": "background_removal", **data},
            files={"image": ("p.png", png_bytes())},
            headers=acct.key_headers,
        )
        assert refused.status_code == 422
        assert refused.json()["success"] is False
        assert named in str(refused.json())
    assert balance_of(resources, acct.id) == 2
