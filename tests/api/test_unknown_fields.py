"""A misspelled or unknown field is a 422 naming it (with a near miss suggested), on JSON and
form bodies alike, before anything is reserved or charged (src/pixelmill/api/strict.py)."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi.testclient import TestClient

from pixelmill.resources import Resources
from tests.support.accounts import make_account
from tests.support.api import b64_png
from tests.support.credits import balance_of, held_reservations


def _errors(r: httpx.Response) -> list[dict[str, Any]]:
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert isinstance(detail, list), detail
    return detail


def test_a_misspelled_field_on_an_async_job_is_refused_before_any_reservation(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    r = client.post(
        "/api/v2/generate/avatar",
        json={"prompt": "a woman in a red coat", "num_images": 1000},
        headers=acct.key_headers,
    )
    [error] = _errors(r)
    assert error["loc"] == ["body", "num_images"]
    assert error["type"] == "unknown_field"
    assert error["msg"] == "Unknown field `num_images`; did you mean `num_outputs`?"
    assert balance_of(resources, acct.id) == 10
    assert held_reservations(resources, acct.id) == 0
    jobs = client.get("/api/v2/jobs", headers=acct.key_headers).json()
    assert (jobs["jobs"] if isinstance(jobs, dict) else jobs) == []


def test_a_misspelled_field_on_a_sync_call_is_refused_and_not_charged(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    r = client.post(
        "/api/v2/remove-background",
        json={"image_base64": b64_png(), "bg_colour": "ffffff", "frobnicate": 1},
        headers=acct.key_headers,
    )
    errors = _errors(r)
    assert [e["loc"] for e in errors] == [["body", "bg_colour"], ["body", "frobnicate"]]
    assert errors[0]["msg"] == "Unknown field `bg_colour`; did you mean `bg_color`?"
    assert errors[1]["msg"].startswith("Unknown field `frobnicate`; known fields: ")
    assert "image_url" in errors[1]["msg"]
    assert balance_of(resources, acct.id) == 10


def test_unknown_fields_inside_nested_objects_are_named_with_their_path(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    r = client.post(
        "/api/v2/batches",
        json={"images": [{"id": "sku-1", "image": b64_png(), "categroy": "shoes"}]},
        headers=acct.key_headers,
    )
    locs = [e["loc"] for e in _errors(r)]
    assert locs == [["body", "images", 0, "categroy"]], r.text
    assert balance_of(resources, acct.id) == 10


def test_declared_aliases_still_pass(client: TestClient, resources: Resources) -> None:
    """``count`` is a documented alias of ``num_outputs``: not an unknown field."""
    acct = make_account(resources, credits=10)
    r = client.post(
        "/api/v2/generate/avatar",
        json={"prompt": "a man in a blue shirt", "count": 1},
        headers=acct.key_headers,
    )
    assert r.status_code == 202, r.text


def test_an_unknown_form_field_is_refused_on_multipart_and_urlencoded_bodies(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    r = client.post(
        "/api/v1/upscale",
        files={"file": ("a.png", b"\x89PNG")},
        data={"scale": "2", "qualty": "fast"},
        headers=acct.key_headers,
    )
    [error] = _errors(r)
    assert error["loc"] == ["body", "qualty"]
    assert error["msg"] == "Unknown field `qualty`; did you mean `quality`?"
    r = client.post(
        "/api/auth/login", data={"username": acct.email, "password": acct.password, "user": "x"}
    )
    assert _errors(r)[0]["loc"] == ["body", "user"]
    assert balance_of(resources, acct.id) == 10


def test_login_with_json_says_it_takes_a_form(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources)
    r = client.post("/api/auth/login", json={"username": acct.email, "password": acct.password})
    [error] = _errors(r)
    assert error["msg"].startswith("This endpoint takes form fields")
    assert "not JSON" in error["msg"]


def test_a_json_body_without_its_content_type_says_so(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    r = client.post(
        "/api/v2/remove-background",
        content=b'{"image_url": "https://x.test/a.png"}',
        headers=acct.key_headers,
    )
    [error] = _errors(r)
    assert error["msg"] == (
        "Send the body as JSON with the header Content-Type: application/json (none was sent)"
    )
    assert balance_of(resources, acct.id) == 10
