"""``/api/avatars/saved`` with a login token: saving a person photo keeps it under an integer
id with six studio samples for 6 credits; a variation under a parent is free; the list nests
variations when asked; v2 avatars appear too; a photo without a person, an unknown parent and
another account's parent cost nothing."""

from __future__ import annotations

import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from skimage import data as skdata

from pixelmill.credits import ledger
from pixelmill.generation import studio
from pixelmill.resources import Resources
from tests.support.accounts import login, make_account
from tests.support.credits import balance_of, held_reservations, ledger_consistent
from tests.support.images import encode
from tests.support.servers import serve_bytes

ASTRONAUT: np.ndarray = skdata.astronaut()  # type: ignore[no-untyped-call]


def test_saved_avatars(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=8)
    other = make_account(resources, credits=8)
    headers = {"Authorization": f"Bearer {login(client, acct.email, acct.password)}"}
    others = {"Authorization": f"Bearer {login(client, other.email, other.password)}"}
    routes = {
        "/person.jpg": (200, "image/jpeg", encode(ASTRONAUT, "JPEG", quality=90)),
        "/flat.png": (200, "image/png", encode(np.full((200, 300, 3), 90, np.uint8), "PNG")),
    }
    with serve_bytes(routes) as base:
        r = client.post(
            "/api/avatars/saved",
            data={"name": "Eileen", "image_url": f"{base}/person.jpg", "style": "studio"},
            headers=headers,
        )
        assert r.status_code == 200, r.text
        saved = r.json()
        assert isinstance(saved["id"], int) and saved["kind"] == "saved"
        assert saved["credits_used"] == 6 and len(saved["samples"]) == 6
        assert balance_of(resources, acct.id) == 2
        sample = client.get(saved["samples"][0].removeprefix("http://testserver"))
        assert sample.status_code == 200 and sample.content[:4] == b"\x89PNG"

        r = client.post(
            "/api/avatars/saved",
            data={
                "name": "Eileen, red",
                "image_url": f"{base}/flat.png",
                "parent_id": str(saved["id"]),
            },
            headers=headers,
        )
        assert r.status_code == 200, r.text
        variation = r.json()
        assert variation["parent_id"] == saved["id"] and variation["credits_used"] == 0
        assert variation["samples"] == [] and balance_of(resources, acct.id) == 2

        # No person: a clear 422, nothing charged; another account's parent is a 404.
        r = client.post(
            "/api/avatars/saved",
            data={"name": "wall", "image_url": f"{base}/flat.png"},
            headers=headers,
        )
        assert r.status_code == 422 and "person" in r.json()["detail"], r.text
        r = client.post(
            "/api/avatars/saved",
            data={"name": "x", "image_url": f"{base}/flat.png", "parent_id": str(saved["id"])},
            headers=others,
        )
        assert r.status_code == 404, r.text
        r = client.post(
            "/api/avatars/saved",
            data={"name": "x", "image_url": f"{base}/flat.png", "parent_id": "999999999"},
            headers=headers,
        )
        assert r.status_code == 404, r.text

    r = client.get("/api/avatars/saved", headers=headers)
    assert r.status_code == 200, r.text
    listed = r.json()
    assert [a["id"] for a in listed] == [saved["id"]]  # children are not top-level
    assert listed[0]["variations"] is None and len(listed[0]["samples"]) == 6
    r = client.get("/api/avatars/saved?include_variations=true", headers=headers)
    nested = r.json()[0]["variations"]
    assert [v["id"] for v in nested] == [variation["id"]]
    assert client.get("/api/avatars/saved", headers=others).json() == []
    assert client.get("/api/avatars/saved").status_code == 401

    # The same avatar in the v2 library, under its UUID; try-on can name it by integer id.
    r = client.get(f"/api/v2/avatars/{saved['uuid']}", headers=acct.key_headers)
    assert r.status_code == 200, r.text
    with resources.db.read() as session:
        for user_id in (acct.id, other.id):
            assert ledger.balance(session, user_id) == ledger.ledger_sum(session, user_id)
    assert balance_of(resources, other.id) == 8


def test_a_failed_write_charges_nothing_and_keeps_no_files(
    app: FastAPI, resources: Resources, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The samples are paid for in the transaction that writes the avatar rows: when that
    write fails, the capture is rolled back with it, the reservation released, and neither
    rows nor copied files are left."""
    acct = make_account(resources, credits=8)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the database went away mid-write")

    monkeypatch.setattr(studio, "save_avatar", broken)
    library_files = resources.settings.data_dir / "library"
    before = set(library_files.rglob("*")) if library_files.exists() else set()
    routes = {"/person.jpg": (200, "image/jpeg", encode(ASTRONAUT, "JPEG", quality=90))}
    with (
        serve_bytes(routes) as base,
        TestClient(app, raise_server_exceptions=False) as client,
    ):
        headers = {"Authorization": f"Bearer {login(client, acct.email, acct.password)}"}
        r = client.post(
            "/api/avatars/saved",
            data={"name": "Eileen", "image_url": f"{base}/person.jpg"},
            headers=headers,
        )
        assert r.status_code == 500, r.text
        assert client.get("/api/avatars/saved", headers=headers).json() == []
    assert balance_of(resources, acct.id) == 8
    assert ledger_consistent(resources, acct.id)
    assert held_reservations(resources, acct.id) == 0
    after = set(library_files.rglob("*")) if library_files.exists() else set()
    assert {p for p in after - before if p.is_file()} == set()
