"""The same refusal reads the same on every surface: a 0-byte image and an image over the
plan's size are one message each (sizes in MB, as the plans state them) and one status on v1
(multipart), v2 (JSON base64) and the unversioned ``/api/process``; nothing is charged."""

from __future__ import annotations

import base64
from typing import Any

import httpx
from fastapi.testclient import TestClient

from pixelmill.imaging import EMPTY_IMAGE, megabytes, too_large_message
from pixelmill.resources import Resources
from tests.support.accounts import Account, make_account
from tests.support.credits import balance_of

FREE_LIMIT = 5 * 1024 * 1024


def _message(r: httpx.Response) -> str:
    body: dict[str, Any] = r.json()
    return str(body.get("detail") or body.get("error"))


def _every_surface(client: TestClient, acct: Account, data: bytes) -> list[httpx.Response]:
    h = acct.key_headers
    return [
        client.post("/api/v1/remove-background", files={"file": ("a.png", data)}, headers=h),
        client.post(
            "/api/v2/remove-background",
            json={"image_base64": base64.b64encode(data).decode()},
            headers=h,
        ),
        client.post(
            "/api/process",
            data={"processing_type": "background_removal"},
            files={"image": ("a.png", data)},
            headers=h,
        ),
    ]


def test_an_empty_file_is_one_message_everywhere(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=5)
    for r in _every_surface(client, acct, b""):
        assert r.status_code == 400, (r.request.url, r.text)
        assert _message(r) == EMPTY_IMAGE == "The image is empty (0 bytes).", r.text
    # Neither field at all is another mistake, with its own message.
    r = client.post("/api/v2/remove-background", json={}, headers=acct.key_headers)
    assert r.status_code == 422 and "image_base64 or image_url" in _message(r)
    assert balance_of(resources, acct.id) == 5


def test_a_file_over_the_plan_is_one_message_in_mb_everywhere(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=5, plan="free")
    data = b"\x89PNG\r\n\x1a\n" + bytes(int(5.5 * 1024 * 1024) - 8)
    expected = "The image is 5.5 MB; the limit is 5 MB."
    assert too_large_message(len(data), FREE_LIMIT) == expected
    for r in _every_surface(client, acct, data):
        assert r.status_code == 413, (r.request.url, r.text)
        assert _message(r) == expected, (r.request.url, r.text)
    assert balance_of(resources, acct.id) == 5


def test_megabytes_never_rounds_a_refused_size_down_to_its_limit() -> None:
    assert megabytes(FREE_LIMIT) == "5" and megabytes(12 * 1024 * 1024 + 524288) == "12.5"
    assert too_large_message(FREE_LIMIT + 1, FREE_LIMIT) == (
        "The image is 5.1 MB; the limit is 5 MB."
    )
    assert too_large_message(None, FREE_LIMIT, "The URL's content") == (
        "The URL's content is larger than 5 MB, the limit."
    )
