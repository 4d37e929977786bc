"""The video job routed to Replicate (``PIXELMILL_ROUTE_VIDEO``) through the live app: the job is
created with ``POST /api/v2/generate/video`` and run by the job runner; the fake Replicate sees
one prediction whose input is the operator's template filled (the image as a PNG, the offline
voice's WAV of the script), and the MP4 it returns is, byte for byte, the job's result. A
prediction that fails falls back to the offline video (said in ``details``) or, with
``fallback=error``, fails the job with the reason; either way the price is charged at most once
and ``balance == sum(ledger)``."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import wave
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from pixelmill.config import Settings
from pixelmill.engines.registry import build_engines
from pixelmill.engines.video.encode import ffmpeg_exe
from pixelmill.engines.video.hosted import mp4_info, parse_input_template
from pixelmill.providers.routing import parse_route
from pixelmill.resources import route_engines
from tests.marketing.test_ad_http import _poll, shop
from tests.marketing.test_video_jobs import fetch, wait_video
from tests.providers.conftest import RoutedApp
from tests.providers.fakes import serve
from tests.support.accounts import Account, make_account
from tests.support.credits import consistent_balance
from tests.support.images import encode, photo_rgb

TOKEN = "r8_test_video_0123456789"
ROUTE = "replicate:cjwbw/sadtalker:a519cc0cfebaaeade068b23899165a11ec76aaa1d2b313d40d214f204ec957a3"
VERSION = ROUTE.rsplit(":", 1)[1]
TEMPLATE = {"source_image": "{{image}}", "driven_audio": "{{audio}}", "still": True}
SCRIPT = "Meet the blue mug. It keeps coffee hot for hours."


@pytest.fixture(scope="module")
def provider_mp4(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A real 2 s, 320x240 H.264 + AAC MP4, as a talking-video model would return."""
    out = Path(tmp_path_factory.mktemp("mp4")) / "talking.mp4"
    subprocess.run(
        [
            ffmpeg_exe(),
            "-hide_banner",
            "-loglevel",
            "error",
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=320x240:rate=25:duration=2",
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:duration=2",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
            "-shortest",
            str(out),
        ],
        check=True,
    )
    return out.read_bytes()


def test_mp4_info_reads_duration_and_size(provider_mp4: bytes) -> None:
    info = mp4_info(provider_mp4)
    assert (info.width, info.height) == (320, 240)
    assert 1.9 <= info.duration <= 2.2
    for bad in (b"", b"\x00\x00\x00\x08free", encode(photo_rgb(32, 32)), provider_mp4[:100]):
        with pytest.raises(ValueError):
            mp4_info(bad)


def test_video_routes_and_templates_are_checked(tmp_path: Path) -> None:
    assert parse_route("video", ROUTE).model.startswith("cjwbw/sadtalker:")
    settings = Settings(data_dir=tmp_path, routes={"video": "openai:sora-2"})
    with pytest.raises(ValueError, match="video can be routed to replicate, not openai"):
        route_engines(build_engines(), settings)
    assert parse_input_template(None) == {"image": "{{image}}", "audio": "{{audio}}"}
    assert parse_input_template(json.dumps(TEMPLATE)) == TEMPLATE
    for bad, message in [
        ("[1]", "JSON object"),
        ("{nope", "not JSON"),
        ('{"face": "{{photo}}"}', "unknown placeholders"),
        ('{"still": true, "seed": "{{seed}}"}', "sends neither"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_input_template(bad)


def _create(client: TestClient, acct: Account) -> int:
    r = client.post(
        "/api/v2/generate/video",
        json={
            "image_base64": base64.b64encode(encode(photo_rgb(320, 240))).decode(),
            "script": SCRIPT,
            "aspect": "1:1",
        },
        headers=acct.key_headers,
    )
    assert r.status_code == 202, r.text
    assert r.json()["credits_reserved"] == 50
    job_id: int = r.json()["job_id"]
    return job_id


def _data_url(value: str, mime: str) -> bytes:
    prefix = f"data:{mime};base64,"
    assert value.startswith(prefix), value[:40]
    return base64.b64decode(value[len(prefix) :])


def _settings(fake_url: str, **more: Any) -> dict[str, Any]:
    return {
        "routes": {"video": ROUTE},
        "replicate_base_url": fake_url,
        "replicate_api_token": TOKEN,
        "video_input": json.dumps(TEMPLATE),
        "job_workers": 1,
        "analyze_products": False,
        "provider_timeout_seconds": 10.0,
        **more,
    }


def test_video_job_renders_through_replicate(routed_app: RoutedApp, provider_mp4: bytes) -> None:
    with serve("replicate") as fake, routed_app(**_settings(fake.url)) as (client, res):
        fake.output = (provider_mp4, "video/mp4", "mp4")
        acct = make_account(res, credits=60)
        job = wait_video(client, acct, _create(client, acct))
        assert job["status"] == "completed", job
        assert TOKEN not in json.dumps(job)
        # The provider's MP4 is the result, byte for byte.
        assert fetch(client, job["video_url"]) == provider_mp4
        details = job["details"]
        assert details["provider"] == ROUTE and details["mode"] == "provider"
        assert details["method"].startswith(f"talking-video model {ROUTE} through a Replicate")
        assert "inputs: audio, image" in details["method"]
        assert job["duration_seconds"] == pytest.approx(2.0, abs=0.2)
        assert job["script"] == SCRIPT
        assert job["credits_used"] == 50
        assert consistent_balance(res, acct.id) == 10

    (create,) = [s for s in fake.seen if s.path == "/v1/predictions"]
    assert create.method == "POST"
    assert create.headers["authorization"] == f"Bearer {TOKEN}"
    assert create.headers["prefer"] == "wait=10"
    assert create.json["version"] == VERSION
    inputs = create.json["input"]
    assert set(inputs) == {"source_image", "driven_audio", "still"} and inputs["still"] is True
    png = _data_url(inputs["source_image"], "image/png")
    assert png.startswith(b"\x89PNG")
    wav = _data_url(inputs["driven_audio"], "audio/wav")
    with wave.open(io.BytesIO(wav)) as audio:
        seconds = audio.getnframes() / audio.getframerate()
        assert audio.getnchannels() == 1 and audio.getsampwidth() == 2
    assert 2.0 < seconds < 8.0  # the spoken script (12 words)
    assert "GET /v1/predictions/p1" in fake.paths() and fake.paths()[-1] == "GET /files/p1.mp4"


def test_a_failed_prediction_falls_back_to_the_offline_video(routed_app: RoutedApp) -> None:
    with serve("replicate") as fake, routed_app(**_settings(fake.url)) as (client, res):
        fake.mode = "fail"  # the prediction ends "failed"
        acct = make_account(res, credits=60)
        job = wait_video(client, acct, _create(client, acct), timeout=120)
        assert job["status"] == "completed", job
        details = job["details"]
        assert details["provider"] == "offline"
        assert details["provider_failed"]["provider"] == ROUTE
        assert "the prediction failed: CUDA out of memory" in details["provider_failed"]["error"]
        assert details["method"].endswith(f"(offline fallback: {ROUTE} failed)")
        assert details["mode"] in ("face", "product")
        mp4 = fetch(client, job["video_url"])
        assert mp4_info(mp4).width == 960  # the offline renderer's 1:1 canvas
        assert job["credits_used"] == 50
        assert consistent_balance(res, acct.id) == 10
    assert [p for p in fake.paths() if p.startswith("POST")] == ["POST /v1/predictions"]


@pytest.mark.parametrize(
    ("mode", "reason"),
    [("500", "HTTP 500 from /v1/predictions"), ("not-mp4", "not a usable MP4")],
)
def test_with_fallback_error_the_job_fails_with_the_reason(
    routed_app: RoutedApp, mode: str, reason: str
) -> None:
    settings = _settings(fake_url="", provider_fallback="error", provider_max_attempts=2)
    with serve("replicate") as fake:
        settings["replicate_base_url"] = fake.url
        if mode == "not-mp4":
            fake.output = (b"<html>not a video</html>", "video/mp4", "mp4")
        else:
            fake.mode = mode
        with routed_app(**settings) as (client, res):
            acct = make_account(res, credits=60)
            job = wait_video(client, acct, _create(client, acct))
            assert job["status"] == "failed", job
            error = job["error_message"]
            assert error.startswith("no result could be produced (the video failed at its ")
            assert ROUTE in error and reason in error and TOKEN not in error
            assert job["video_url"] is None and job["credits_used"] == 0
            assert consistent_balance(res, acct.id) == 60
    creates = [p for p in fake.paths() if p == "POST /v1/predictions"]
    assert len(creates) == (2 if mode == "500" else 1)  # a 500 is retried once (two tries)


def test_the_ad_pack_video_renders_through_replicate(
    routed_app: RoutedApp, provider_mp4: bytes
) -> None:
    """The ad pack's UGC video takes the same route as the video job: the provider's MP4 is
    the pack's video, byte for byte, and the pack is charged its price once."""
    with (
        serve("replicate") as fake,
        shop() as base,
        routed_app(**_settings(fake.url, allow_loopback_urls=True)) as (client, res),
    ):
        fake.output = (provider_mp4, "video/mp4", "mp4")
        acct = make_account(res, credits=60)
        r = client.post(
            "/api/v2/ad-pack",
            json={
                "url": f"{base}/product",
                "include_images": False,
                "include_ads": False,
                "include_captions": False,
                "include_video": True,
            },
            headers=acct.key_headers,
        )
        assert r.status_code == 202, r.text
        price = r.json()["credits_reserved"]
        body = _poll(client, acct, f"/api/v2/ad-pack/{r.json()['job_id']}", timeout=120)
        assert body["status"] == "completed", body
        assert fetch(client, body["ugc_video_url"]) == provider_mp4
        assert body["credits_used"] == price
        assert consistent_balance(res, acct.id) == 60 - price
    (create,) = [s for s in fake.seen if s.path == "/v1/predictions"]
    inputs = create.json["input"]
    assert set(inputs) == {"source_image", "driven_audio", "still"}
    assert _data_url(inputs["source_image"], "image/png").startswith(b"\x89PNG")
    # The written script's speech is too large for a data URL: it went up through files.
    assert inputs["driven_audio"] == f"{fake.url}/v1/files/f1"
    assert "POST /v1/files" in fake.paths()
