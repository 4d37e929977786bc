"""Operations routed to a provider through the live app: each fake provider on 127.0.0.1 sees the
requests its protocol documents (asserted), its answers become the normal responses (a named
subject in ``analyze``, the provider's image as the result), and every call is charged once with
``balance == sum(ledger)``."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
from fastapi.testclient import TestClient
from PIL import Image

from tests.api.app_surface.test_tryon import shirt_png
from tests.providers.conftest import RoutedApp
from tests.providers.fakes import OUTPUT_COLOUR, PREDICT_TIME, serve
from tests.support.accounts import login, make_account
from tests.support.credits import consistent_balance
from tests.support.images import encode, photo_rgb

OPENAI_KEY = "sk-test-never-shown-0123456789"
REPLICATE_TOKEN = "r8_test_never_shown_0123456789"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def png_image(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as im:
        assert im.format == "PNG"
        return np.asarray(im.convert("RGBA"))


def result_pixels(client: TestClient, url: str) -> np.ndarray:
    r = client.get(url.removeprefix("http://testserver"))
    assert r.status_code == 200
    with Image.open(io.BytesIO(r.content)) as im:
        return np.asarray(im.convert("RGB"), dtype=np.int32)


def is_provider_image(pixels: np.ndarray) -> bool:
    return bool(np.abs(pixels - np.array(OUTPUT_COLOUR)).max() <= 6)


def test_analyze_names_the_subject_through_openai(routed_app: RoutedApp) -> None:
    with (
        serve("openai") as fake,
        routed_app(
            routes={"analyze": "openai:gpt-4o-mini"},
            openai_base_url=f"{fake.url}/v1",
            openai_api_key=OPENAI_KEY,
        ) as (client, res),
    ):
        acct = make_account(res, credits=5)
        image = photo_rgb(240, 160)
        r = client.post(
            "/api/v2/analyze",
            json={"image_base64": b64(encode(image))},
            headers=acct.key_headers,
        )
        assert r.status_code == 200, r.text
        body = r.json()
        assert OPENAI_KEY not in r.text
        analysis = body["analysis"]
        assert "ginger cat" in analysis["objects"]
        assert "ginger cat" in analysis["description"]
        assert analysis["accessibility_alt_text"] == "A ginger cat sleeping on a blue cushion."
        assert analysis["mood"] == "calm and cosy"
        # The offline measurements stay: palette, quality, composition.
        assert analysis["colors"] and "quality_assessment" in analysis
        assert body["details"]["provider"] == "openai:gpt-4o-mini"
        assert "vision-language model openai:gpt-4o-mini" in body["details"]["method"]
        assert body["credits_used"] == 1
        assert consistent_balance(res, acct.id) == 4

    (seen,) = fake.seen
    assert (seen.method, seen.path) == ("POST", "/v1/chat/completions")
    assert seen.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert seen.json["model"] == "gpt-4o-mini"
    assert seen.json["response_format"] == {"type": "json_object"}
    system, user = seen.json["messages"]
    assert system["role"] == "system" and "JSON schema" in system["content"]
    text, picture = user["content"]
    assert text["type"] == "text"
    assert picture["type"] == "image_url"
    url = picture["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    sent = png_image(base64.b64decode(url.split(",", 1)[1]))
    assert sent.shape[:2] == (160, 240)


def test_image_to_prompt_through_openai(routed_app: RoutedApp) -> None:
    with (
        serve("openai") as fake,
        routed_app(
            routes={"image_to_prompt": "openai:llava"}, openai_base_url=f"{fake.url}/v1"
        ) as (client, res),
    ):
        acct = make_account(res, credits=5)
        r = client.post(
            "/api/v2/image-to-prompt",
            json={"image_base64": b64(encode(photo_rgb(300, 200)))},
            headers=acct.key_headers,
        )
        assert r.status_code == 200, r.text
        prompts = r.json()["prompts"]
        assert prompts["general"].startswith("A photograph of a ginger cat")
        assert prompts["midjourney"].endswith("--ar 3:2")
        assert prompts["stable_diffusion"]["negative"] == "blurry, lowres, watermark"
        assert r.json()["details"]["analysis"]["subject"] == "a ginger cat"
        assert r.json()["details"]["provider"] == "openai:llava"
        assert consistent_balance(res, acct.id) == 4
    (seen,) = fake.seen
    # No key configured (a local Ollama): no Authorization header at all.
    assert "authorization" not in seen.headers
    assert seen.json["model"] == "llava"


def test_image_to_image_through_the_images_api(routed_app: RoutedApp) -> None:
    with (
        serve("openai") as fake,
        routed_app(
            routes={"image_to_image": "openai:gpt-image-1"},
            openai_base_url=f"{fake.url}/v1",
            openai_api_key=OPENAI_KEY,
        ) as (client, res),
    ):
        acct = make_account(res, credits=10)
        source = encode(photo_rgb(200, 150))
        r = client.post(
            "/api/v2/image-to-image",
            json={"image_base64": b64(source), "prompt": "add snow"},
            headers=acct.key_headers,
        )
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["details"]["provider"] == "openai:gpt-image-1"
        assert "OpenAI images API" in body["details"]["method"]
        pixels = result_pixels(client, body["result_url"])
        assert pixels.shape[:2] == (64, 96) and is_provider_image(pixels)
        assert body["credits_used"] == 2
        # edit is not routed: the offline grammar still refuses "add snow", free of charge.
        r = client.post(
            "/api/v2/edit",
            json={"image_base64": b64(source), "prompt": "add snow"},
            headers=acct.key_headers,
        )
        assert r.status_code == 422
        assert consistent_balance(res, acct.id) == 8

    (seen,) = fake.seen
    assert (seen.method, seen.path) == ("POST", "/v1/images/edits")
    assert seen.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert seen.headers["content-type"].startswith("multipart/form-data")
    assert seen.form == {"model": "gpt-image-1", "prompt": "add snow", "n": "1"}
    ((_name, ctype, data),) = seen.files["image"]
    assert ctype == "image/png" and png_image(data).shape[:2] == (150, 200)
    assert "mask" not in seen.files


def test_replace_background_through_openai_keeps_the_subject_by_a_mask(
    routed_app: RoutedApp,
) -> None:
    with (
        serve("openai") as fake,
        routed_app(
            routes={"replace_background": "openai:gpt-image-1"},
            openai_base_url=f"{fake.url}/v1",
        ) as (client, res),
    ):
        acct = make_account(res, credits=5)
        from tests.support.images import product_rgb

        r = client.post(
            "/api/v2/replace-background",
            json={"image_base64": b64(encode(product_rgb())), "prompt": "a snowy forest"},
            headers=acct.key_headers,
        )
        assert r.status_code == 200, r.text
        assert is_provider_image(result_pixels(client, r.json()["result_url"]))
        assert consistent_balance(res, acct.id) == 3
    (seen,) = fake.seen
    assert "a snowy forest" in seen.form["prompt"]
    ((_, _, mask),) = seen.files["mask"]
    alpha = png_image(mask)[..., 3]
    # Opaque where the product is kept, transparent where the background is replaced.
    assert alpha.shape == (240, 320) and alpha.min() == 0 and alpha.max() == 255
    assert alpha[120, 160] == 255 and alpha[5, 5] == 0


def write_workflow(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    workflow = {
        "3": {"class_type": "LoadImage", "inputs": {"image": "{{image}}"}},
        "4": {"class_type": "LoadImage", "inputs": {"image": "{{mask}}"}},
        "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "photo, {{prompt}}, detailed"}},
        "7": {"class_type": "KSampler", "inputs": {"seed": "{{seed}}", "steps": 20}},
        "9": {"class_type": "SaveImage", "inputs": {"filename_prefix": "pixelmill"}},
    }
    (folder / "replace_background.json").write_text(json.dumps(workflow))
    return folder


def test_replace_background_through_comfyui(routed_app: RoutedApp, tmp_path: Path) -> None:
    workflows = write_workflow(tmp_path / "workflows")
    with (
        serve("comfyui") as fake,
        routed_app(
            routes={"replace_background": "comfyui:replace_background.json"},
            comfyui_url=fake.url,
            comfyui_workflows=workflows,
        ) as (client, res),
    ):
        acct = make_account(res, credits=5)
        r = client.post(
            "/api/v2/replace-background",
            json={
                "image_base64": b64(encode(photo_rgb(160, 120))),
                "prompt": "a beach at sunset",
                "seed": 42,
            },
            headers=acct.key_headers,
        )
        assert r.status_code == 200, r.text
        details = r.json()["details"]
        assert details["provider"] == "comfyui:replace_background.json"
        assert "ComfyUI workflow" in details["method"]
        assert is_provider_image(result_pixels(client, r.json()["result_url"]))
        assert consistent_balance(res, acct.id) == 3

    paths = fake.paths()
    assert paths[:3] == ["POST /upload/image", "POST /upload/image", "POST /prompt"]
    assert paths.count("GET /history/pr-1") == 2  # running, then done
    assert paths[-1] == "GET /view"
    uploads = [s for s in fake.seen if s.path == "/upload/image"]
    assert all(s.form == {"type": "input", "overwrite": "true"} for s in uploads)
    names = [s.files["image"][0][0] for s in uploads]
    queued = next(s for s in fake.seen if s.path == "/prompt").json
    assert queued["client_id"]
    prompt = queued["prompt"]
    assert prompt["3"]["inputs"]["image"] == names[0]
    assert prompt["4"]["inputs"]["image"] == names[1]
    assert prompt["6"]["inputs"]["text"].startswith("photo, Replace the background with: a beach")
    assert prompt["7"]["inputs"]["seed"] == 42  # a whole placeholder keeps the value's type
    view = fake.seen[-1].query
    assert view == {"filename": "result_0001.png", "subfolder": "pixelmill", "type": "output"}


def test_tryon_through_replicate(routed_app: RoutedApp) -> None:
    with (
        serve("replicate") as fake,
        routed_app(
            routes={"tryon": "replicate:cuuupid/idm-vton:c871bb9b0466"},
            replicate_base_url=fake.url,
            replicate_api_token=REPLICATE_TOKEN,
        ) as (client, res),
    ):
        acct = make_account(res, credits=5)
        headers = {"Authorization": f"Bearer {login(client, acct.email, acct.password)}"}
        model = client.get("/api/v2/avatars/public", headers=acct.key_headers).json()[0]["id"]
        r = client.post(
            "/api/tryon/generate",
            data={"model_id": model, "model_type": "public", "num_outputs": "2"},
            files={"product_image": ("shirt.png", shirt_png(), "image/png")},
            headers=headers,
        )
        assert r.status_code == 200, r.text
        assert REPLICATE_TOKEN not in r.text
        body = r.json()
        assert body["credits_used"] == 2 and len(body["result_urls"]) == 2
        assert body["details"]["provider"] == "replicate:cuuupid/idm-vton:c871bb9b0466"
        for url in body["result_urls"]:
            pixels = result_pixels(client, url)
            assert pixels.shape[:2] == (120, 80) and is_provider_image(pixels)
        assert consistent_balance(res, acct.id) == 3

    creates = [s for s in fake.seen if s.path == "/v1/predictions"]
    assert len(creates) == 2
    for seed, seen in enumerate(creates):
        assert seen.headers["authorization"] == f"Bearer {REPLICATE_TOKEN}"
        assert seen.headers["prefer"].startswith("wait=")
        assert seen.json["version"] == "c871bb9b0466"
        inputs = seen.json["input"]
        assert set(inputs) == {"human_img", "garm_img", "garment_des", "seed"}
        assert inputs["seed"] == seed and inputs["garment_des"] == "clothing"
        for key in ("human_img", "garm_img"):
            # Small files inline as data URLs, larger ones through the files API.
            assert inputs[key].startswith(("data:image/png;base64,", f"{fake.url}/v1/files/"))
    uploads = [s for s in fake.seen if s.path == "/v1/files"]
    for up in uploads:
        ((_, ctype, data),) = up.files["content"]
        assert ctype == "image/png" and len(data) > 256 * 1024
    assert "GET /v1/predictions/p1" in fake.paths() and "GET /files/p1.png" in fake.paths()
    # Output downloads from the API host carry the token (it is the provider's own host).
    download = next(s for s in fake.seen if s.path == "/files/p1.png")
    assert download.headers["authorization"] == f"Bearer {REPLICATE_TOKEN}"


def _tryon_job(client: TestClient, acct: Any, count: int) -> dict[str, Any]:
    from tests.generation.test_people import _png_b64, tshirt
    from tests.support.api import wait_terminal

    public = client.get("/api/v2/avatars/public", headers=acct.key_headers).json()[0]["id"]
    r = client.post(
        "/api/v2/jobs",
        json={
            "product_image": _png_b64(tshirt()),
            "images_to_generate": count,
            "model_id": public,
            "category": "clothing",
        },
        headers=acct.key_headers,
    )
    assert r.status_code == 202, r.text
    return wait_terminal(client, acct, r.json()["job_id"], timeout=120)


def test_tryon_job_renders_each_image_through_replicate(routed_app: RoutedApp) -> None:
    with (
        serve("replicate") as fake,
        routed_app(
            routes={"tryon": "replicate:cuuupid/idm-vton:c871bb9b0466"},
            replicate_base_url=fake.url,
            replicate_api_token=REPLICATE_TOKEN,
            job_workers=1,
            analyze_products=False,
        ) as (client, res),
    ):
        acct = make_account(res, credits=5)
        job = _tryon_job(client, acct, 2)
        assert job["status"] == "completed" and job["type"] == "tryon", job
        assert len(job["results"]) == 2 and job["credits_used"] == 2
        for item in job["results"]:
            assert is_provider_image(result_pixels(client, item["url"]))
        assert consistent_balance(res, acct.id) == 3
        assert [u["predict_time_s"] for u in job["provider_usage"]] == [PREDICT_TIME] * 2
    creates = [s for s in fake.seen if s.path == "/v1/predictions"]
    seeds = [s.json["input"]["seed"] for s in creates]
    assert len(seeds) == 2 and seeds[1] == seeds[0] + 1  # the job's seed, then one per image


def test_tryon_job_with_a_failing_provider_releases_the_images(routed_app: RoutedApp) -> None:
    with (
        serve("replicate") as fake,
        routed_app(
            routes={"tryon": "replicate:cuuupid/idm-vton:c871bb9b0466"},
            replicate_base_url=fake.url,
            replicate_api_token=REPLICATE_TOKEN,
            provider_fallback="error",
            job_workers=1,
            analyze_products=False,
        ) as (client, res),
    ):
        fake.mode = "500"
        acct = make_account(res, credits=5)
        job = _tryon_job(client, acct, 2)
        assert job["status"] == "failed", job
        assert job["credits_used"] == 0
        assert consistent_balance(res, acct.id) == 5
