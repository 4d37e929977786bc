"""Video jobs through the HTTP surfaces on both databases: a portrait and a product photo made
into 5 s talking videos (H.264 + AAC, duration within 10 % of the speech, the mouth moving
with the voice), the client contract's request shape (``script: ""``), integer ids scoped to
the account, a failed job refunded with the ledger consistent, the JWT create-video and
video-status routes."""

from __future__ import annotations

from typing import Any

import httpx
import numpy as np
from fastapi import FastAPI
from fastapi.testclient import TestClient

from pixelmill.engines.video.face import face_mesh, find_face
from pixelmill.marketing.ad_kinds import AdPackJobParams, AssetCollectionJobParams
from pixelmill.marketing.kinds import VideoJobParams
from pixelmill.resources import Resources
from tests.marketing.media import audio_pcm, envelope, grey_frames, probe
from tests.support.accounts import Account, login, make_account
from tests.support.credits import balance_of, held_reservations, ledger_consistent
from tests.support.servers import live_server
from tests.support.waiting import wait_until

MESH = face_mesh()
SCRIPT = "Hello there. This is a short test of the talking video, made from one photo."


def wait_video(
    client: TestClient | httpx.Client, acct: Account, job_id: int, timeout: float = 90
) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        r = client.get(f"/api/v2/jobs/video/{job_id}", headers=acct.key_headers)
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        assert body["status"] in ("pending", "processing", "completed", "failed")
        return body if body["status"] in ("completed", "failed") else None

    result: dict[str, Any] = wait_until(done, timeout=timeout, interval=0.2)
    return result


def fetch(client: TestClient | httpx.Client, url: str) -> bytes:
    r = client.get(url.removeprefix("http://testserver"))
    assert r.status_code == 200 and r.headers["content-type"] == "video/mp4"
    return bytes(r.content)


def mouth_motion_correlation(mp4: bytes, width: int, height: int) -> float:
    """Correlation between the mouth box's mean difference from the resting first frame (the
    voice starts after a short silence) and the audio's loudness per frame. (Frame-to-frame
    differences follow the head sway and push-in as much as the mouth, so they are not used.)"""
    frames = grey_frames(mp4, width, height).astype(np.float32)
    env = envelope(audio_pcm(mp4), len(frames))
    marks = find_face(np.dstack([frames[0]] * 3).astype(np.uint8), MESH)
    assert marks is not None
    pts = marks.points
    x0, x1 = float(pts[61, 0]), float(pts[291, 0])
    w = x1 - x0
    yc = float(pts[13, 1] + pts[14, 1]) / 2
    crop = frames[:, int(yc - 0.35 * w) : int(yc + 0.6 * w), int(x0 - 0.1 * w) : int(x1 + 0.1 * w)]
    from_rest = np.abs(crop - crop[0]).mean(axis=(1, 2))
    return float(np.corrcoef(from_rest, env)[0, 1])


def test_portrait_and_product_videos_complete(
    app: FastAPI, resources: Resources, image_server: str
) -> None:
    """Against a live server (uvicorn on 127.0.0.1), over HTTP."""
    acct = make_account(resources, credits=120)
    with live_server(app) as base, httpx.Client(base_url=base, timeout=60) as client:
        _portrait_and_product(client, resources, acct, image_server)


def _portrait_and_product(
    client: httpx.Client, resources: Resources, acct: Account, image_server: str
) -> None:
    portrait = client.post(
        "/api/v2/generate/video",
        json={"image_url": f"{image_server}/portrait.png", "script": SCRIPT, "duration": 5},
        headers=acct.key_headers,
    )
    # the Activepieces / Pipedream shape: an empty script, duration always 5
    product = client.post(
        "/api/v2/generate/video",
        json={"image_url": f"{image_server}/product.jpg", "script": "", "duration": 5},
        headers=acct.key_headers,
    )
    for r in (portrait, product):
        assert r.status_code == 202, r.text
        body = r.json()
        assert isinstance(body["job_id"], int) and body["credits_reserved"] == 50
        assert body["status"] == "pending"
        assert body["poll_url"].endswith(f"/api/v2/jobs/video/{body['job_id']}")

    face = wait_video(client, acct, portrait.json()["job_id"])
    prod = wait_video(client, acct, product.json()["job_id"])
    for done in (face, prod):
        assert done["status"] == "completed", done
        assert done["credits_used"] == 50 and done["current_step"] == "done"
        assert done["retry_count"] == 0 and done["completed_at"] and done["created_at"]
    assert face["details"]["mode"] == "face"
    assert "not a generative lip-sync model" in face["details"]["method"]
    assert prod["details"]["mode"] == "product" and "camera move" in prod["details"]["method"]
    # the product's script was written for 5 s from the image's facts
    assert prod["script"] and "templated" in prod["details"]["script_method"]

    for done in (face, prod):
        mp4 = fetch(client, done["video_url"])
        info = probe(mp4)
        assert (info.video_codec, info.pix_fmt, info.audio_codec) == ("h264", "yuv420p", "aac")
        assert (info.width, info.height) == (720, 1280)
        speech = done["details"]["timings"]
        assert abs(info.duration - done["duration_seconds"]) <= 0.1 * done["duration_seconds"]
        assert speech and 3.0 <= info.duration <= 8.0
    assert abs(prod["duration_seconds"] - 5) <= 1.5  # a written 5 s script

    mp4 = fetch(client, face["video_url"])
    info = probe(mp4)
    corr = mouth_motion_correlation(mp4, info.width, info.height)
    assert corr > 0.4, corr  # measured 0.66 on this portrait and script

    assert balance_of(resources, acct.id) == 20
    assert ledger_consistent(resources, acct.id) and held_reservations(resources, acct.id) == 0


def test_ids_are_scoped_and_a_failed_job_is_refunded(
    client: TestClient, resources: Resources, image_server: str
) -> None:
    acct = make_account(resources, credits=60)
    other = make_account(resources, credits=5)
    # a script with nothing the voice can say: accepted, then the job fails with its reason
    r = client.post(
        "/api/v2/generate/video",
        json={"image_url": f"{image_server}/product.jpg", "script": "🙂 🙂 🙂", "duration": 5},
        headers=acct.key_headers,
    )
    assert r.status_code == 202, r.text
    job_id = r.json()["job_id"]
    assert client.get(f"/api/v2/jobs/video/{job_id}", headers=other.key_headers).status_code == 404
    failed = wait_video(client, acct, job_id)
    assert failed["status"] == "failed" and "nothing to speak" in failed["error_message"]
    assert failed["video_url"] is None and failed["credits_used"] == 0
    assert balance_of(resources, acct.id) == 60
    assert ledger_consistent(resources, acct.id) and held_reservations(resources, acct.id) == 0

    # refused before anything is reserved: too few credits, a private address, a long script
    poor = client.post(
        "/api/v2/generate/video",
        json={"image_url": f"{image_server}/product.jpg", "script": "", "duration": 5},
        headers=other.key_headers,
    )
    assert poor.status_code == 402
    long = client.post(
        "/api/v2/generate/video",
        json={"image_url": f"{image_server}/product.jpg", "script": "word " * 201},
        headers=acct.key_headers,
    )
    assert long.status_code == 422 and "200 words" in long.json()["detail"]
    missing = client.post("/api/v2/generate/video", json={"script": "hi"}, headers=acct.key_headers)
    assert missing.status_code == 422
    assert client.get("/api/v2/jobs/video/999999", headers=acct.key_headers).status_code == 404
    private = client.post(
        "/api/v2/generate/video",
        json={"image_url": "http://10.1.2.3/photo.png", "script": "", "duration": 5},
        headers=acct.key_headers,
    )
    assert 400 <= private.status_code < 500 and private.json()["detail"]

    # the same Idempotency-Key twice: one job, the first answer replayed
    keyed = {**acct.key_headers, "Idempotency-Key": "video-once"}
    body = {"image_url": f"{image_server}/product.jpg", "script": "🙂", "duration": 5}
    first = client.post("/api/v2/generate/video", json=body, headers=keyed)
    again = client.post("/api/v2/generate/video", json=body, headers=keyed)
    assert first.status_code == again.status_code == 202
    assert first.json() == again.json()
    assert wait_video(client, acct, first.json()["job_id"])["status"] == "failed"
    assert balance_of(resources, acct.id) == 60 and balance_of(resources, other.id) == 5


def test_jwt_create_video_and_status(
    client: TestClient, resources: Resources, image_server: str
) -> None:
    acct = make_account(resources, credits=50)
    headers = {"Authorization": f"Bearer {login(client, acct.email, acct.password)}"}
    r = client.post(
        "/api/tryon/create-video",
        data={
            "image_url": f"{image_server}/product.jpg",
            "script": "Fresh coffee, ready when you are. Try it today.",
            "enable_subtitles": "true",
            "prompt": "make it pop",
        },
        headers=headers,
    )
    assert r.status_code == 202, r.text
    body = r.json()
    assert isinstance(body["job_id"], int) and body["credits_used"] == 50
    assert "prompt not used" in body["message"]

    def done() -> dict[str, Any] | None:
        s = client.get(f"/api/tryon/video-status/{body['job_id']}", headers=headers)
        assert s.status_code == 200, s.text
        out: dict[str, Any] = s.json()
        return out if out["status"] in ("completed", "failed") else None

    status = wait_until(done, timeout=90, interval=0.2)
    assert status["status"] == "completed" and status["video_url"]
    assert status["script"] == "Fresh coffee, ready when you are. Try it today."
    info = probe(fetch(client, status["video_url"]))
    assert info.video_codec == "h264" and info.audio_codec == "aac"
    other = make_account(resources, credits=0)
    other_headers = {"Authorization": f"Bearer {login(client, other.email, other.password)}"}
    gone = client.get(f"/api/tryon/video-status/{body['job_id']}", headers=other_headers)
    assert gone.status_code == 404
    assert balance_of(resources, acct.id) == 0 and ledger_consistent(resources, acct.id)


def test_rows_stored_before_typed_params_still_read() -> None:
    """The dicts the creates wrote before the kinds declared their params read back typed,
    their keys unchanged, and what the runs merged in later is kept."""
    video = VideoJobParams.model_validate(
        {
            "script": "Hello there",
            "duration": 8,
            "aspect": "1:1",
            "tone": "casual",
            "subtitles": True,
            "product_name": None,
            "surface": "tryon",
            "video": {"duration_seconds": 3.2},
        }
    )
    assert (video.script, video.duration, video.aspect, video.tone) == (
        "Hello there",
        8,
        "1:1",
        "casual",
    )
    assert video.subtitles and video.surface == "tryon" and video.video["duration_seconds"] == 3.2
    pack = AdPackJobParams.model_validate(
        {"url": "https://shop.test/p", "parts": {"ads": 2}, "warnings": None, "captions": [{}]}
    )
    assert (pack.url, pack.parts, pack.warnings, pack.captions) == (
        "https://shop.test/p",
        {"ads": 2},
        None,
        [{}],
    )
    collection = AssetCollectionJobParams.model_validate(
        {"description": "A mug", "catalog_product_id": 4, "category": "home"}
    )
    assert (collection.description, collection.catalog_product_id, collection.category) == (
        "A mug",
        4,
        "home",
    )
