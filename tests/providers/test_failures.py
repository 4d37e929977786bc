"""A provider that answers 500, answers too late or answers garbage: with
``PIXELMILL_PROVIDER_FALLBACK=offline`` the offline engine runs and ``details`` say so (charged
once); with ``error`` the caller gets a clear 502/503 and the credits come back. Either way
``balance == sum(ledger)`` and nothing stays held."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from tests.providers.conftest import RoutedApp
from tests.providers.fakes import serve
from tests.support.accounts import make_account
from tests.support.credits import consistent_balance
from tests.support.images import encode, photo_rgb

ROUTE = "openai:gpt-image-1"


def _post(client, acct, prompt: str = "make it warmer and brighter"):  # type: ignore[no-untyped-def]
    image = base64.b64encode(encode(photo_rgb(160, 120))).decode()
    return client.post(
        "/api/v2/image-to-image",
        json={"image_base64": image, "prompt": prompt},
        headers=acct.key_headers,
    )


@pytest.mark.parametrize(
    ("mode", "reason"),
    [("500", "HTTP 500"), ("slow", "no answer within 1 s"), ("garbage", "not a usable image")],
)
def test_offline_fallback_says_so(routed_app: RoutedApp, mode: str, reason: str) -> None:
    with serve("openai") as fake:
        fake.mode = mode
        with routed_app(
            routes={"image_to_image": ROUTE},
            openai_base_url=f"{fake.url}/v1",
            provider_fallback="offline",
        ) as (client, res):
            acct = make_account(res, credits=5)
            r = _post(client, acct)
            assert r.status_code == 200, r.text
            details = r.json()["details"]
            assert details["provider"] == "offline"
            assert details["provider_failed"]["provider"] == ROUTE
            assert reason in details["provider_failed"]["error"]
            assert details["method"].endswith(f"(offline fallback: {ROUTE} failed)")
            assert r.json()["credits_used"] == 2
            assert consistent_balance(res, acct.id) == 3
    # 500s and timeouts are retried (two tries configured); garbage is not.
    tries = 1 if mode == "garbage" else 2
    assert fake.paths() == ["POST /v1/images/edits"] * tries


@pytest.mark.parametrize(
    ("mode", "status", "code"),
    [("500", 502, "HTTP 500"), ("slow", 503, "no answer"), ("garbage", 502, "not a usable")],
)
def test_error_fallback_is_a_clear_5xx_and_releases(
    routed_app: RoutedApp, mode: str, status: int, code: str
) -> None:
    with serve("openai") as fake:
        fake.mode = mode
        with routed_app(
            routes={"image_to_image": ROUTE},
            openai_base_url=f"{fake.url}/v1",
            openai_api_key="sk-secret-key-0000",
            provider_fallback="error",
        ) as (client, res):
            acct = make_account(res, credits=5)
            r = _post(client, acct, prompt="add snow")
            assert r.status_code == status, r.text
            detail = r.json()["detail"]
            assert detail.startswith(f"image_to_image failed at its backend {ROUTE}")
            assert code in detail and "sk-secret" not in r.text
            if status == 503:
                assert r.headers["retry-after"] == "30"
            assert consistent_balance(res, acct.id) == 5
            # The history records the failure; nothing was captured.
            history = client.get("/api/v1/history", headers=acct.key_headers)
            assert history.status_code == 200


def test_vision_garbage_falls_back_to_the_offline_analysis(routed_app: RoutedApp) -> None:
    with serve("openai") as fake:
        fake.mode = "garbage"
        with routed_app(
            routes={"analyze": "openai:gpt-4o-mini"}, openai_base_url=f"{fake.url}/v1"
        ) as (client, res):
            acct = make_account(res, credits=3)
            image = base64.b64encode(encode(photo_rgb(200, 150))).decode()
            r = client.post(
                "/api/v2/analyze", json={"image_base64": image}, headers=acct.key_headers
            )
            assert r.status_code == 200, r.text
            details = r.json()["details"]
            assert details["provider"] == "offline"
            assert "does not have the expected fields" in details["provider_failed"]["error"]
            assert "ginger cat" not in r.text
            assert consistent_balance(res, acct.id) == 2


def test_replicate_failed_prediction_with_error_fallback(routed_app: RoutedApp) -> None:
    with serve("replicate") as fake:
        fake.mode = "fail"
        with routed_app(
            routes={"upscale": "replicate:nightmareai/real-esrgan:42fed1c4"},
            replicate_base_url=fake.url,
            replicate_api_token="r8_token",
            provider_fallback="error",
        ) as (client, res):
            acct = make_account(res, credits=5)
            image = base64.b64encode(encode(photo_rgb(64, 48))).decode()
            r = client.post(
                "/api/v2/upscale",
                json={"image_base64": image, "scale": 2},
                headers=acct.key_headers,
            )
            assert r.status_code == 502, r.text
            assert "the prediction failed: CUDA out of memory" in r.json()["detail"]
            assert consistent_balance(res, acct.id) == 5
    create = next(s for s in fake.seen if s.path == "/v1/predictions")
    assert create.json["version"] == "42fed1c4"
    assert set(create.json["input"]) == {"image", "scale"}
    assert create.json["input"]["scale"] == 2


def test_a_rejected_key_is_a_502_that_shows_no_key(routed_app: RoutedApp) -> None:
    with (
        serve("openai") as fake,
        routed_app(
            routes={"image_to_image": ROUTE},
            openai_base_url=f"{fake.url}/v1",
            openai_api_key="sk-test-never-shown-0123456789",
            provider_fallback="error",
        ) as (client, res),
    ):
        fake.mode = "401"
        acct = make_account(res, credits=5)
        r = _post(client, acct, prompt="add snow")
        assert r.status_code == 502, r.text
        assert "HTTP 401" in r.json()["detail"] and "Incorrect API key" in r.json()["detail"]
        # The provider echoed "sk-test-ne*****6789" (the masked tail, not a bare "6789", which a
        # random hex id in the body could hold).
        assert "sk-test" not in r.text and "*****6789" not in r.text
        assert consistent_balance(res, acct.id) == 5
    assert len(fake.seen) == 1  # a 401 is not retried


def test_large_inputs_are_sent_scaled_down(routed_app: RoutedApp) -> None:
    with (
        serve("openai") as fake,
        routed_app(
            routes={"analyze": "openai:gpt-4o-mini", "image_to_image": ROUTE},
            openai_base_url=f"{fake.url}/v1",
        ) as (client, res),
    ):
        acct = make_account(res, credits=10)
        big = base64.b64encode(encode(photo_rgb(2600, 1300))).decode()
        for path, body in (("analyze", {}), ("image-to-image", {"prompt": "add snow"})):
            r = client.post(
                f"/api/v2/{path}", json={"image_base64": big, **body}, headers=acct.key_headers
            )
            assert r.status_code == 200, r.text
    chat, edits = fake.seen
    url = chat.json["messages"][1]["content"][1]["image_url"]["url"]
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as im:
        assert im.size == (1024, 512)
    with Image.open(io.BytesIO(edits.files["image"][0][2])) as im:
        assert im.size == (2048, 1024)
