"""Test keys through the real HTTP surface: a ``pk_test_`` key made (and replaced) once per
account; its background removal, scene job and batch run the real engines and cost nothing
(balance and ledger unchanged, ``X-Credits-Charged: 0``), their images carry the "TEST"
watermark where the live key's do not (judged on pixels), their bodies and webhook payloads
say ``"test": true``; its own rate bucket answers 429 while the live key is untouched; it
cannot make keys."""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import numpy.typing as npt
from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy import func, select

from pixelmill.db.models import CreditLedgerEntry
from pixelmill.imaging.watermark import watermark_masks
from pixelmill.resources import Resources
from tests.marketing.conftest import portrait
from tests.marketing.media import grey_frames, probe
from tests.marketing.products import bottle
from tests.marketing.test_ad_http import LD, PAGE
from tests.marketing.test_video_jobs import fetch
from tests.support.accounts import Account, login, make_account
from tests.support.api import b64_png, upload_product, wait_batch, wait_terminal
from tests.support.credits import consistent_balance
from tests.support.images import encode
from tests.support.servers import serve_bytes
from tests.support.waiting import wait_until
from tests.support.webhooks import webhook_receiver


def _test_key(client: TestClient, acct: Account) -> dict[str, str]:
    r = client.post("/api/v2/account/test-key", headers=acct.key_headers)
    assert r.status_code == 201, r.text
    token: str = r.json()["token"]
    assert token.startswith("pk_test_")
    return {"Authorization": f"Bearer {token}"}


def _ledger_rows(resources: Resources, user_id: int) -> int:
    with resources.db.read() as session:
        stmt = select(func.count()).where(CreditLedgerEntry.user_id == user_id)
        return int(session.scalar(stmt) or 0)


def _pixels(client: TestClient, url: str) -> npt.NDArray[np.uint8]:
    r = client.get(url)
    assert r.status_code == 200, url
    return np.asarray(Image.open(io.BytesIO(r.content)))


def _contrast(pixels: npt.NDArray[np.uint8]) -> float:
    """How much brighter the watermark's letters are than their outline in this image: the
    watermark makes it large; in an image without it the two thin, interleaved regions
    average alike."""
    letters, outline = watermark_masks(*pixels.shape[:2])
    rgb = pixels[..., :3].astype(np.float64)
    return float(rgb[letters].mean() - rgb[outline].mean())


def test_a_test_key_is_shown_once_replaced_and_cannot_make_keys(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=5)
    first = _test_key(client, acct)
    assert client.get("/api/v2/account", headers=first).status_code == 200
    second = _test_key(client, acct)
    assert second != first
    assert client.get("/api/v2/account", headers=first).status_code == 401  # replaced
    r = client.get("/api/v2/account", headers=second)
    assert r.status_code == 200 and r.json()["email"] == acct.email
    assert client.get("/api/v2/account", headers=acct.key_headers).status_code == 200

    refused = client.post("/api/v2/account/test-key", headers=second)
    assert refused.status_code == 403 and "test key" in refused.json()["detail"]
    assert client.get("/api/v2/account", headers=second).status_code == 200  # still valid

    # The dashboard makes one with its access token.
    token = login(client, acct.email, acct.password)
    r = client.post("/api/v2/account/test-key", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 201 and r.json()["token"].startswith("pk_test_")
    assert client.get("/api/v2/account", headers=second).status_code == 401


def test_background_removal_costs_nothing_and_is_watermarked(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    test = _test_key(client, acct)
    image = {"image_base64": b64_png(320, 240)}

    live = client.post("/api/v2/remove-background", json=image, headers=acct.key_headers)
    assert live.status_code == 200, live.text
    assert live.json()["test"] is False and live.json()["credits_used"] == 1
    assert live.headers["X-Credits-Charged"] == "1" and live.headers["X-Credits-Remaining"] == "9"
    rows = _ledger_rows(resources, acct.id)

    r = client.post("/api/v2/remove-background", json=image, headers=test)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["test"] is True
    assert body["credits_used"] == 0 and body["credits_remaining"] == 9
    assert r.headers["X-Credits-Charged"] == "0" and r.headers["X-Credits-Remaining"] == "9"
    assert consistent_balance(resources, acct.id) == 9
    assert _ledger_rows(resources, acct.id) == rows  # no ledger entry at all

    # v1 (multipart) too.
    files = {"file": ("image.png", client.get(live.json()["result_url"]).content)}
    v1 = client.post("/api/v1/remove-background", files=files, headers=test)
    assert v1.status_code == 200, v1.text
    assert v1.json()["test"] is True and v1.json()["credits_used"] == 0
    assert consistent_balance(resources, acct.id) == 9

    # The same engine on the same input: the two cut-outs are identical except under the
    # watermark, where the test key's letters are light and opaque even over transparency.
    plain = _pixels(client, live.json()["result_url"])
    marked = _pixels(client, body["result_url"])
    assert plain.shape == marked.shape == (240, 320, 4)
    letters, outline = watermark_masks(240, 320)
    drawn = letters | outline
    assert np.array_equal(plain[~drawn], marked[~drawn])
    assert (marked[..., 3][letters] >= 200).all()
    assert (plain[..., 3][letters] >= 200).mean() < 0.5  # the live cut-out's ground is clear
    assert np.abs(plain[letters].astype(int) - marked[letters].astype(int)).mean() > 40
    assert _contrast(marked) > 60 and abs(_contrast(plain)) < 15


def test_a_scene_job_and_a_batch_cost_nothing_and_are_watermarked(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    test = _test_key(client, acct)
    product = upload_product(client, acct)
    rows = _ledger_rows(resources, acct.id)
    with webhook_receiver() as rx:
        r = client.post(
            "/api/v2/generate/scenes",
            json={"product_uuid": product["uuid"], "num_scenes": 2, "webhook_url": rx.url},
            headers=test,
        )
        assert r.status_code == 202, r.text
        created = r.json()
        assert created["credits_reserved"] == 0 and created["credits_remaining"] == 10
        assert created["test"] is True
        assert r.headers["X-Credits-Charged"] == "0" and r.headers["X-Credits-Remaining"] == "10"

        job = wait_terminal(client, acct, created["job_id"])  # the live key reads it too
        assert job["status"] == "completed", job
        assert job["test"] is True and job["credits_used"] == 0 and job["credits_reserved"] == 0
        assert len(job["results"]) == 2
        for res in job["results"]:
            assert _contrast(_pixels(client, res["url"])) > 40

        hooks = wait_until(lambda: rx.snapshot() or None, timeout=30)
        payload: dict[str, Any] = json.loads(hooks[0].body)
        assert payload["event"] == "job.completed" and payload["test"] is True
        assert payload["credits_used"] == 0

    batch = client.post(
        "/api/v2/batches",
        json={"images": [{"id": "sku-1", "image": b64_png()}], "images_per_product": 1},
        headers=test,
    )
    assert batch.status_code == 202, batch.text
    assert batch.json()["credits_reserved"] == 0 and batch.json()["test"] is True
    done = wait_batch(client, acct, batch.json()["batch_id"])
    assert done["test"] is True and done["credits_used"] == 0
    assert done["images"][0]["status"] == "completed"
    assert _contrast(_pixels(client, done["images"][0]["results"][0]["url"])) > 40

    assert consistent_balance(resources, acct.id) == 10
    assert _ledger_rows(resources, acct.id) == rows

    # The live key's job is charged and its scenes carry no watermark.
    r = client.post(
        "/api/v2/generate/scenes",
        json={"product_uuid": product["uuid"], "num_scenes": 1},
        headers=acct.key_headers,
    )
    assert r.status_code == 202 and r.json()["test"] is False
    assert r.headers["X-Credits-Charged"] == "1" and r.headers["X-Credits-Remaining"] == "9"
    live = wait_terminal(client, acct, r.json()["job_id"])
    assert live["status"] == "completed" and live["test"] is False and live["credits_used"] == 1
    assert abs(_contrast(_pixels(client, live["results"][0]["url"]))) < 15
    assert consistent_balance(resources, acct.id) == 9


def _finished(client: TestClient, headers: dict[str, str], path: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        r = client.get(path, headers=headers)
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        return body if body["status"] in ("completed", "failed") else None

    result: dict[str, Any] = wait_until(done, timeout=120, interval=0.2)
    return result


def test_video_avatar_and_ad_pack_creates_say_test(
    client: TestClient, resources: Resources
) -> None:
    """The create answers of a video, an avatar job and an ad pack carry ``"test"`` as the
    scene job's does: true with a test key (nothing charged), false with the live key and on
    the JWT surface (create-video, asset collection)."""
    acct = make_account(resources, credits=70)
    test = _test_key(client, acct)
    rows = _ledger_rows(resources, acct.id)
    routes = {
        "/portrait.png": (200, "image/png", encode(portrait(), "PNG")),
        "/product": (200, "text/html; charset=utf-8", PAGE.format(ld=json.dumps(LD)).encode()),
        "/img/bottle.png": (200, "image/png", encode(bottle(), "PNG")),
    }
    with serve_bytes(routes) as base:
        video = client.post(
            "/api/v2/generate/video",
            json={"image_url": f"{base}/portrait.png", "script": "Hello there.", "duration": 5},
            headers=test,
        )
        avatar = client.post(
            "/api/v2/generate/avatar",
            json={"generation_type": "guided", "prompt": "a woman with red hair", "count": 1},
            headers=test,
        )
        pack = client.post(
            "/api/v2/ad-pack",
            json={
                "url": f"{base}/product",
                "include_images": False,
                "include_ads": False,
                "include_captions": True,
                "include_video": False,
            },
            headers=test,
        )
        for r in (video, avatar, pack):
            assert r.status_code == 202, r.text
            assert r.json()["test"] is True and r.json()["credits_reserved"] == 0, r.json()
            assert r.headers["X-Credits-Charged"] == "0"
        # Polled with the live key (it reads the test key's jobs; the test key's rate is small).
        done = [
            _finished(client, acct.key_headers, f"/api/v2/jobs/video/{video.json()['job_id']}"),
            _finished(client, acct.key_headers, f"/api/v2/jobs/avatar/{avatar.json()['job_id']}"),
            _finished(client, acct.key_headers, f"/api/v2/ad-pack/{pack.json()['job_id']}"),
        ]
        for body in done:
            assert body["status"] == "completed" and body["test"] is True, body
            assert body["credits_used"] == 0
        assert consistent_balance(resources, acct.id) == 70
        assert _ledger_rows(resources, acct.id) == rows

        # The live key's avatar job, the JWT create-video and asset collection: false.
        live = client.post(
            "/api/v2/generate/avatar",
            json={"generation_type": "guided", "prompt": "a man with a beard", "count": 1},
            headers=acct.key_headers,
        )
        assert live.status_code == 202 and live.json()["test"] is False, live.text
        assert live.json()["credits_reserved"] == 1
        jwt = {"Authorization": f"Bearer {login(client, acct.email, acct.password)}"}
        jwt_video = client.post(
            "/api/tryon/create-video",
            data={"image_url": f"{base}/portrait.png", "script": "Hello there."},
            headers=jwt,
        )
        assert jwt_video.status_code == 202 and jwt_video.json()["test"] is False, jwt_video.text
        collection = client.post(
            "/api/tryon/start-asset-collection",
            files={"product_image": ("bottle.png", encode(bottle(), "PNG"), "image/png")},
            data={"category": "other", "product_description": "A steel bottle."},
            headers=jwt,
        )
        assert collection.status_code == 202 and collection.json()["test"] is False
        charged = [
            _finished(client, acct.key_headers, f"/api/v2/jobs/avatar/{live.json()['job_id']}"),
            _finished(client, jwt, f"/api/tryon/video-status/{jwt_video.json()['job_id']}"),
            _finished(
                client, jwt, f"/api/tryon/asset-collection/{collection.json()['collection_id']}"
            ),
        ]
    assert [body["status"] for body in charged] == ["completed"] * 3, charged
    assert consistent_balance(resources, acct.id) == 70 - 1 - 50 - 6


def test_the_test_key_has_its_own_rate_limit(client: TestClient, resources: Resources) -> None:
    """Work made with the test key (here: deleting a webhook that is not there, a 404 that
    counts) spends its own bucket, never the plan's; reads go to the read allowance."""
    acct = make_account(resources, credits=1, plan="free")
    test = _test_key(client, acct)
    per_minute = resources.settings.test_key_requests_per_minute
    before = client.delete("/api/v2/webhooks/999999", headers=acct.key_headers)
    live_left = int(before.headers["X-RateLimit-Remaining"])
    for i in range(per_minute):
        r = client.delete("/api/v2/webhooks/999999", headers=test)
        assert r.status_code == 404, r.text
        assert r.headers["X-RateLimit-Scope"] == "test-key"
        assert r.headers["X-RateLimit-Limit"] == str(per_minute)
        assert r.headers["X-RateLimit-Remaining"] == str(per_minute - 1 - i)
    refused = client.delete("/api/v2/webhooks/999999", headers=test)
    assert refused.status_code == 429
    assert "the test key's allowance" in refused.json()["detail"]
    assert "Retry-After" in refused.headers
    # Reading with the test key still works: reads have their own allowance.
    assert client.get("/api/v2/account", headers=test).status_code == 200

    # The live key's plan bucket did not count the test key's calls.
    after = client.delete("/api/v2/webhooks/999999", headers=acct.key_headers)
    assert after.status_code == 404
    assert int(after.headers["X-RateLimit-Remaining"]) == live_left - 1


PACK_PARTS = ("images", "ads", "captions", "video")


def _video_frames(client: TestClient, url: str) -> npt.NDArray[np.uint8]:
    mp4 = fetch(client, url)
    info = probe(mp4)
    assert (info.video_codec, info.audio_codec) == ("h264", "aac")
    return grey_frames(mp4, info.width, info.height)


def test_a_video_job_is_watermarked_on_every_frame(
    client: TestClient, resources: Resources
) -> None:
    """The same talking-video request with the live key and the test key: the test key's MP4
    carries the mark in the first, middle and last frames, where the live key's does not; off
    the mark the two videos agree. The test key's ad pack video is marked the same way."""
    acct = make_account(resources, credits=60)
    test = _test_key(client, acct)
    routes = {
        "/portrait.png": (200, "image/png", encode(portrait(), "PNG")),
        "/product": (200, "text/html; charset=utf-8", PAGE.format(ld=json.dumps(LD)).encode()),
        "/img/bottle.png": (200, "image/png", encode(bottle(), "PNG")),
    }
    with serve_bytes(routes) as base:
        request = {"image_url": f"{base}/portrait.png", "script": "Hello there.", "duration": 5}
        made = {
            name: client.post("/api/v2/generate/video", json=request, headers=headers)
            for name, headers in (("live", acct.key_headers), ("test", test))
        }
        only_video = {f"include_{part}": part == "video" for part in PACK_PARTS}
        pack = client.post(
            "/api/v2/ad-pack", json={"url": f"{base}/product", **only_video}, headers=test
        )
        assert pack.status_code == 202 and pack.json()["test"] is True, pack.text
        done = {}
        for name, r in made.items():
            assert r.status_code == 202, r.text
            path = f"/api/v2/jobs/video/{r.json()['job_id']}"
            done[name] = _finished(client, acct.key_headers, path)
            assert done[name]["status"] == "completed", done[name]
        packed = _finished(client, acct.key_headers, f"/api/v2/ad-pack/{pack.json()['job_id']}")
        assert packed["status"] == "completed" and packed["credits_used"] == 0, packed
    assert done["test"]["test"] is True and done["test"]["credits_used"] == 0
    assert done["live"]["test"] is False and done["live"]["credits_used"] == 50
    assert consistent_balance(resources, acct.id) == 10

    live = _video_frames(client, done["live"]["video_url"])
    marked = _video_frames(client, done["test"]["video_url"])
    # Each job draws its own seed (the head's sway, the voice's lead-in): a frame or two more
    # or fewer, so frames are matched by their place in the video.
    assert marked.shape[1:] == live.shape[1:] and abs(len(marked) - len(live)) <= 5
    letters, outline = watermark_masks(*live.shape[1:])
    away = ~(letters | outline)
    for at in (0.0, 0.5, 1.0):
        a, b = marked[round(at * (len(marked) - 1))], live[round(at * (len(live) - 1))]
        ca, cb = _contrast(a[..., None]), _contrast(b[..., None])
        assert ca > 40 and abs(cb) < 15, (at, ca, cb)
        under = np.abs(a[letters].astype(int) - b[letters]).mean()
        elsewhere = np.abs(a[away].astype(int) - b[away]).mean()
        assert under > 30 and under > 5 * elsewhere, (at, under, elsewhere)

    ugc = _video_frames(client, packed["ugc_video_url"])  # the ad pack's UGC video
    for at in (0.0, 0.5, 1.0):
        assert _contrast(ugc[round(at * (len(ugc) - 1))][..., None]) > 40, at
