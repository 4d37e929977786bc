"""The v2 endpoints of the remaining engines through plain JSON requests: fields present and
typed as the clients expect, a measurable property of each result, bad input free of charge."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
from fastapi.testclient import TestClient
from PIL import Image

from pixelmill.resources import Resources
from tests.support.accounts import make_account
from tests.support.credits import balance_of
from tests.support.images import decode, encode, photo_rgb, png_bytes


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def post(client: TestClient, path: str, headers: dict[str, str], **body: Any) -> dict[str, Any]:
    r = client.post(f"/api/v2/{path}", json=body, headers=headers)
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    for key in ("status", "credits_used", "credits_remaining", "processing_time", "details"):
        assert key in out
    assert isinstance(out["details"]["method"], str) and out["details"]["method"]
    return out


def image_of(client: TestClient, url: str) -> np.ndarray:
    r = client.get(url)
    assert r.status_code == 200
    return np.asarray(decode(r.content).convert("RGB"), dtype=np.float64)


def test_unblur_raises_psnr_on_a_blurred_photo(client: TestClient, resources: Resources) -> None:
    import cv2

    acct = make_account(resources, credits=5)
    sharp = photo_rgb(240, 160)
    blurred = cv2.GaussianBlur(sharp, (0, 0), 2.0)
    out = post(client, "unblur", acct.key_headers, image_base64=b64(encode(blurred)))
    restored = image_of(client, out["result_url"])

    def psnr(a: np.ndarray, b: np.ndarray) -> float:
        return float(10 * np.log10(255**2 / np.mean((a - b) ** 2)))

    ref = sharp.astype(np.float64)
    assert psnr(restored, ref) > psnr(blurred.astype(np.float64), ref) + 0.3
    assert out["credits_used"] == 1


def test_colorize_adds_colour(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=5)
    grey = np.repeat(photo_rgb(200, 140).mean(axis=2, keepdims=True), 3, axis=2).astype(np.uint8)
    out = post(client, "colorize", acct.key_headers, image_base64=b64(encode(grey)))
    rgb = image_of(client, out["result_url"])
    chroma = np.abs(rgb[..., 0] - rgb[..., 1]).mean() + np.abs(rgb[..., 1] - rgb[..., 2]).mean()
    assert chroma > 4  # the grey input has 0
    ref = post(
        client,
        "colorize",
        acct.key_headers,
        image_base64=b64(encode(grey)),
        reference_image_base64=b64(encode(photo_rgb(200, 140))),
    )
    assert "reference" in ref["details"]["method"].lower()


def test_style_transfer_styles_differ_and_unknown_is_422(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=5)
    src = encode(photo_rgb(160, 110))
    a = image_of(
        client,
        post(client, "style-transfer", acct.key_headers, image_base64=b64(src), style="sketch")[
            "result_url"
        ],
    )
    b = image_of(
        client,
        post(client, "style-transfer", acct.key_headers, image_base64=b64(src), style="cyberpunk")[
            "result_url"
        ],
    )
    assert np.abs(a - b).mean() > 15
    r = client.post(
        "/api/v2/style-transfer",
        json={"image_base64": b64(src), "style": "baroque"},
        headers=acct.key_headers,
    )
    assert r.status_code == 422
    assert balance_of(resources, acct.id) == 3


def test_analyze_fields(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=2)
    out = client.post(
        "/api/v2/analyze", json={"image_base64": b64(png_bytes())}, headers=acct.key_headers
    ).json()
    a = out["analysis"]
    assert out["result_url"] is None and out["credits_used"] == 1
    assert all(isinstance(o, str) for o in a["objects"])
    assert abs(sum(c["percentage"] for c in a["colors"]) - 100) < 2
    assert all(c["hex"].startswith("#") and c["name"] for c in a["colors"])
    for key in ("overall", "sharpness", "exposure"):
        assert key in a["quality_assessment"]
    assert {"type", "lighting"} <= set(a["composition"])
    assert isinstance(a["text_detected"], list) and isinstance(a["categories"], list)
    assert isinstance(a["accessibility_alt_text"], str) and a["accessibility_alt_text"]
    assert isinstance(a["suggested_uses"], list) and isinstance(a["mood"], str)


def test_edit_interprets_prompt_and_unknown_costs_nothing(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=6)
    src = b64(encode(photo_rgb(160, 110)))
    out = post(
        client, "edit", acct.key_headers, image_base64=src, prompt="make it warmer", strength=1.0
    )
    assert out["credits_used"] == 2
    assert out["details"]["interpreted_as"]
    before = photo_rgb(160, 110).astype(np.float64)
    after = image_of(client, out["result_url"])
    assert (after[..., 0] - after[..., 2]).mean() > (before[..., 0] - before[..., 2]).mean()

    r = client.post(
        "/api/v2/image-to-image",
        json={"image_base64": src, "prompt": "qwzx plorf"},
        headers=acct.key_headers,
    )
    assert r.status_code == 422 and isinstance(r.json()["detail"], str)
    assert balance_of(resources, acct.id) == 4


def test_replace_background_keeps_size(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=3)
    out = post(
        client,
        "replace-background",
        acct.key_headers,
        image_base64=b64(png_bytes(200, 150)),
        prompt="a blue studio background",
    )
    assert out["credits_used"] == 2
    rgb = image_of(client, out["result_url"])
    assert rgb.shape[:2] == (150, 200)
    corner = rgb[:20, :20].reshape(-1, 3).mean(axis=0)
    assert corner[2] > corner[0] + 10  # the backdrop is blue


def test_v1_image_to_image_and_process_variant(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=6)
    src = encode(photo_rgb(120, 80))
    r = client.post(
        "/api/v1/image-to-image",
        files={"file": ("a.png", src)},
        data={"prompt": "black and white", "strength": "1"},
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    grey = np.asarray(decode(base64.b64decode(r.json()["result"])).convert("RGB"), dtype=float)
    assert np.abs(grey[..., 0] - grey[..., 2]).mean() < 3
    r = client.post(
        "/api/process",
        files={"file": ("a.png", src)},
        data={
            "processing_type": "image_to_image",
            "parameters": '{"prompt": "sepia", "strength": 0.8}',
        },
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "completed" and body["credits_used"] == 2
    assert body["result_image_url"].startswith("data:image/")
    raw = base64.b64decode(body["result_image_url"].split(",", 1)[1])
    assert Image.open(__import__("io").BytesIO(raw)).size == (120, 80)
