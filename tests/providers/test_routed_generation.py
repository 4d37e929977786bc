"""Generative operations routed to a provider (issue 41's first part): product scenes painted
around the product by a masked edit (the product's pixels pasted back, exact), on every
provider protocol, through the engine and through a live scenes job."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from skimage import data as skdata

from pixelmill.config import Settings
from pixelmill.engines.avatar import GuidedAvatarParams
from pixelmill.engines.avatar.hosted import GuidedAvatarHosted, ReferenceAvatarHosted
from pixelmill.engines.avatar.reference import ReferenceAvatarParams
from pixelmill.engines.base import EngineError, EngineInputs, PlannedImage
from pixelmill.engines.registry import build_engines
from pixelmill.engines.runtime.hosted import RESEED
from pixelmill.engines.runtime.layers import coverage, crop_cutout, prepare_cutout
from pixelmill.engines.scenes import ScenesParams
from pixelmill.engines.scenes.hosted import ScenesHosted, scene_request
from pixelmill.engines.speech.hosted import SpeechHosted
from pixelmill.engines.tryon import TryOnParams
from pixelmill.engines.tryon.hosted import TryOnHosted
from pixelmill.resources import route_engines
from tests.providers.conftest import RoutedApp
from tests.providers.fakes import IMAGE_USAGE, OUTPUT_COLOUR, SPEECH_SECONDS, Fake, serve
from tests.providers.test_routed_operations import (
    OPENAI_KEY,
    REPLICATE_TOKEN,
    is_provider_image,
    result_pixels,
)
from tests.support.accounts import make_account
from tests.support.api import upload_product, wait_terminal
from tests.support.credits import consistent_balance
from tests.support.images import encode, product_rgb


def _png(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as im:
        assert im.format == "PNG"
        return np.asarray(im)


def _data_url_png(value: str) -> np.ndarray:
    prefix = "data:image/png;base64,"
    assert value.startswith(prefix), value[:40]
    return _png(base64.b64decode(value[len(prefix) :]))


def _settings(tmp_path: Path, provider: str, fake: Fake, operation: str = "scenes") -> Settings:
    routes = {
        "openai": "openai:gpt-image-1",
        "replicate": "replicate:stability-ai/stable-diffusion-inpainting:95b7223104132402",
        "comfyui": "comfyui:scene.json",
    }
    values: dict[str, object] = {"data_dir": tmp_path, "routes": {operation: routes[provider]}}
    if provider == "openai":
        values.update(openai_base_url=f"{fake.url}/v1", openai_api_key=OPENAI_KEY)
    elif provider == "replicate":
        values.update(replicate_base_url=fake.url, replicate_api_token=REPLICATE_TOKEN)
    else:
        folder = tmp_path / "workflows"
        folder.mkdir()
        loads = {"scenes": ["image", "mask"], "avatar_reference": ["image"]}.get(operation, [])
        graph: dict[str, Any] = {
            str(i + 10): {"class_type": "LoadImage", "inputs": {"image": f"{{{{{name}}}}}"}}
            for i, name in enumerate(loads)
        }
        graph["3"] = {
            "class_type": "KSampler",
            "inputs": {
                "seed": "{{seed}}",
                "text": "{{prompt}}",
                "negative": "{{negative_prompt}}",
                "width": "{{width}}",
                "height": "{{height}}",
            },
        }
        graph["4"] = {"class_type": "SaveImage", "inputs": {"images": ["3", 0]}}
        (folder / "scene.json").write_text(json.dumps(graph))
        values.update(comfyui_url=fake.url, comfyui_workflows=folder)
    return Settings(**values)  # type: ignore[arg-type]


def _sent(fake: Fake, provider: str) -> tuple[np.ndarray, np.ndarray]:
    """The image and the mask the provider received (the mask as "may paint": True)."""
    if provider == "openai":
        (edit,) = [s for s in fake.seen if s.path == "/v1/images/edits"]
        assert edit.form["model"] == "gpt-image-1" and "product" in edit.form["prompt"]
        image = _png(edit.files["image"][0][2])
        mask = _png(edit.files["mask"][0][2])
        assert mask.shape[2] == 4
        return image, mask[..., 3] == 0  # transparent: may be edited
    if provider == "replicate":
        (create,) = [s for s in fake.seen if s.path.endswith("/predictions")]
        inputs = create.json["input"]
        assert "product" in inputs["prompt"] and isinstance(inputs["seed"], int)
        image, mask = (_data_url_png(inputs[key]) for key in ("image", "mask"))
        return image, mask[..., 0] == 255  # white: paint
    uploads = [s for s in fake.seen if s.path == "/upload/image"]
    (prompt,) = [s for s in fake.seen if s.path == "/prompt"]
    graph = prompt.json["prompt"]
    assert "product" in graph["3"]["inputs"]["text"] and graph["3"]["inputs"]["width"] == 256
    image, mask = (_png(up.files["image"][0][2]) for up in uploads)
    return image, mask[..., 0] == 255


@pytest.mark.parametrize("provider", ["openai", "replicate", "comfyui"])
def test_a_routed_scene_keeps_the_product_pixel_exact(tmp_path: Path, provider: str) -> None:
    with serve(provider) as fake:
        engines, backends = route_engines(build_engines(), _settings(tmp_path, provider, fake))
        assert backends is not None
        hosted = engines["scenes"]
        assert isinstance(hosted, ScenesHosted) and hosted.name == "scenes"
        params = ScenesParams(num_scenes=1, category="beauty", seed=3, size=256)
        inputs = EngineInputs(product_rgb())
        (planned,) = hosted.plan(inputs, params)
        assert isinstance(planned, PlannedImage)
        out = planned.render()
        backends.close()
    image, paint = _sent(fake, provider)
    assert image.shape[:2] == paint.shape == out.pixels.shape[:2] == (256, 256)
    keep = ~paint
    assert 0.03 < keep.mean() < 0.6  # the product, not the frame
    # Where the product is opaque, it is exactly what was sent; around it, the provider's
    # picture (the anti-aliased rim is a blend of the two).
    cutout, _ = prepare_cutout(inputs.image)
    request = scene_request(crop_cutout(cutout), planned.label, "beauty", 3, 256)
    assert np.array_equal(request.image, image[..., :3]) and np.array_equal(request.keep, keep)
    opaque = coverage((256, 256), request.layer) >= 1.0
    assert opaque.sum() > 0.8 * keep.sum()
    assert np.array_equal(out.pixels[opaque], image[..., :3][opaque])
    ring = np.zeros_like(keep)
    ring[:20], ring[-20:] = True, True
    far = paint & ring
    assert np.abs(out.pixels[far].astype(int) - OUTPUT_COLOUR).max() <= 4
    assert out.label == planned.label and out.data["provider"] == hosted.route.label


def test_a_routed_scenes_job_is_the_providers_picture_and_the_catalogs_price(
    routed_app: RoutedApp,
) -> None:
    with (
        serve("openai") as fake,
        routed_app(
            routes={"scenes": "openai:gpt-image-1"},
            openai_base_url=f"{fake.url}/v1",
            openai_api_key=OPENAI_KEY,
            job_workers=1,
            analyze_products=False,
        ) as (client, res),
    ):
        acct = make_account(res, credits=5)
        product = upload_product(client, acct)
        r = client.post(
            "/api/v2/generate/scenes",
            json={"product_uuid": product["uuid"], "num_scenes": 2},
            headers=acct.key_headers,
        )
        assert r.status_code == 202, r.text
        job = wait_terminal(client, acct, r.json()["job_id"], timeout=120)
        assert job["status"] == "completed" and job["credits_used"] == 2, job
        for item in job["results"]:
            pixels = result_pixels(client, item["url"])
            corner = pixels[:16, :16]
            assert is_provider_image(corner)
        assert consistent_balance(res, acct.id) == 3
        # What each output cost at the provider, on the job's poll.
        usage = job["provider_usage"]
        assert [u["position"] for u in usage] == [0, 1]
        for u in usage:
            assert u["provider"] == "openai:gpt-image-1" and u["provider_s"] > 0
            assert u["total_tokens"] == IMAGE_USAGE["total_tokens"]
    assert [s.path for s in fake.seen].count("/v1/images/edits") == 2


ASTRONAUT = encode(skdata.astronaut(), "PNG")  # type: ignore[no-untyped-call]
"""What the fake providers answer for avatars: a photo with a person in it."""


@pytest.mark.parametrize("provider", ["openai", "replicate", "comfyui"])
def test_a_routed_guided_avatar_is_the_models_person_with_landmarks(
    tmp_path: Path, provider: str
) -> None:
    with serve(provider) as fake:
        fake.output = (ASTRONAUT, "image/png", "png")
        settings = _settings(tmp_path, provider, fake, "avatar_guided")
        engines, backends = route_engines(build_engines(), settings)
        assert backends is not None
        hosted = engines["avatar_guided"]
        assert isinstance(hosted, GuidedAvatarHosted)
        params = GuidedAvatarParams(prompt="a woman in her thirties", num_outputs=2, height=512)
        first, second = hosted.plan(EngineInputs.none(), params)
        out = first.render()
        assert second.render().data["seed"] == out.data["seed"] + 1
        backends.close()
    assert out.pixels.shape == (512, 384, 3)
    assert {"nose", "left_shoulder"} <= set(out.data["landmarks"])
    assert out.data["provider"] == hosted.route.label
    if provider == "openai":
        gen = next(s for s in fake.seen if s.path == "/v1/images/generations")
        assert gen.json["size"] == "1024x1536" and "a woman in her thirties" in gen.json["prompt"]
    elif provider == "replicate":
        create = next(s for s in fake.seen if s.path.endswith("/predictions"))
        assert create.json["input"]["aspect_ratio"] == "3:4"
        assert "a woman in her thirties" in create.json["input"]["prompt"]
    else:
        graph = next(s for s in fake.seen if s.path == "/prompt").json["prompt"]
        assert graph["3"]["inputs"]["width"] == 384 and graph["3"]["inputs"]["height"] == 512


def test_an_avatar_without_a_person_is_not_delivered(tmp_path: Path) -> None:
    """The gate: the provider's flat picture shows nobody; with fallback=error that output
    fails (the job releases its credit), with fallback=offline the offline avatar is drawn."""
    with serve("openai") as fake:
        settings = _settings(tmp_path, "openai", fake, "avatar_guided")
        params = GuidedAvatarParams(prompt="a man", num_outputs=1, height=512)
        engines, backends = route_engines(build_engines(), settings)
        assert backends is not None
        (planned,) = engines["avatar_guided"].plan(EngineInputs.none(), params)  # type: ignore[attr-defined]
        fallback = planned.render()
        assert fallback.data["provider"] == "offline"
        assert "shows no person" in fallback.data["provider_failed"]
        # Rejected once, tried once more on another seed, then the fallback.
        asked = [s.json for s in fake.seen if s.path == "/v1/images/generations"]
        assert len(asked) == 2 and asked[0] == asked[1]  # the images API takes no seed
        backends.close()
        strict = settings.model_copy(update={"provider_fallback": "error"})
        engines, backends = route_engines(build_engines(), strict)
        assert backends is not None
        (planned,) = engines["avatar_guided"].plan(EngineInputs.none(), params)  # type: ignore[attr-defined]
        with pytest.raises(EngineError, match="shows no person"):
            planned.render()
        backends.close()


def test_a_routed_reference_avatar_sends_the_persons_photo(tmp_path: Path) -> None:
    with serve("openai") as fake:
        fake.output = (ASTRONAUT, "image/png", "png")
        settings = _settings(tmp_path, "openai", fake, "avatar_reference")
        engines, backends = route_engines(build_engines(), settings)
        assert backends is not None
        hosted = engines["avatar_reference"]
        assert isinstance(hosted, ReferenceAvatarHosted)
        params = ReferenceAvatarParams(num_outputs=1, height=512, additional_details="smiling")
        with pytest.raises(EngineError):  # no person: refused before anything is sent
            hosted.plan(EngineInputs(product_rgb()), params)
        assert not [s for s in fake.seen if s.path.startswith("/v1/images")]
        (planned,) = hosted.plan(EngineInputs(skdata.astronaut()), params)  # type: ignore[no-untyped-call]
        out = planned.render()
        backends.close()
    (edit,) = [s for s in fake.seen if s.path == "/v1/images/edits"]
    sent = _png(edit.files["image"][0][2])
    assert sent.shape[:2] == (512, 512) and "same person" in edit.form["prompt"]
    assert "smiling" in edit.form["prompt"] and "mask" not in edit.files
    assert out.pixels.shape == (512, 384, 3) and out.data["landmarks"]


def test_a_routed_product_photo_job_sends_the_person_and_the_product(
    routed_app: RoutedApp,
) -> None:
    from tests.generation.test_people import _avatar, _product, _start, bottle

    with (
        serve("openai") as fake,
        routed_app(
            routes={"product_photo": "openai:gpt-image-1"},
            openai_base_url=f"{fake.url}/v1",
            openai_api_key=OPENAI_KEY,
            job_workers=1,
            analyze_products=False,
        ) as (client, res),
    ):
        fake.output = (ASTRONAUT, "image/png", "png")
        acct = make_account(res, credits=10)
        avatar = _avatar(client, acct)  # offline: only product_photo is routed
        product = _product(client, acct, bottle(), "food")
        r = _start(
            client, acct, "product-photo", avatar_uuid=avatar, product_uuid=product, num_outputs=2
        )
        assert r.status_code == 202, r.text
        job = wait_terminal(client, acct, r.json()["job_id"], timeout=120)
        assert job["status"] == "completed" and job["credits_used"] == 2, job
        assert consistent_balance(res, acct.id) == 10 - 1 - 2  # the avatar, then two photos
        for item in job["results"]:
            pixels = result_pixels(client, item["url"])
            assert pixels.shape[0] * 3 == pixels.shape[1] * 4  # 3:4
    edits = [s for s in fake.seen if s.path == "/v1/images/edits"]
    assert len(edits) == 2
    for edit in edits:
        person, product_png = (_png(part[2]) for part in edit.files["image[]"])
        assert person.shape[2] == 3 and "food product" in edit.form["prompt"]
        assert product_png.shape[:2] != person.shape[:2]


def test_routed_speech_is_the_providers_wav_with_timed_words(tmp_path: Path) -> None:
    with serve("openai") as fake:
        settings = Settings(
            data_dir=tmp_path,
            routes={"speech": "openai:gpt-4o-mini-tts"},
            openai_base_url=f"{fake.url}/v1",
            openai_api_key=OPENAI_KEY,
            speech_voice="nova",
        )
        engines, backends = route_engines(build_engines(), settings)
        assert backends is not None
        voice = engines["speech"]
        assert isinstance(voice, SpeechHosted)
        speech = voice.speak("Fresh   coffee, every morning.")
        fake.mode = "garbage"
        fallback = voice.speak("Fresh coffee.")
        backends.close()
    assert speech.sample_rate == 24000 and speech.duration == pytest.approx(SPEECH_SECONDS)
    assert [w.word for w in speech.words] == ["Fresh", "coffee", "every", "morning"]
    assert speech.words[0].start == pytest.approx(0.2, abs=0.03)
    assert speech.words[-1].end == pytest.approx(SPEECH_SECONDS - 0.2, abs=0.03)
    assert "gpt-4o-mini-tts, voice nova" in speech.method
    first = next(s for s in fake.seen if s.path == "/v1/audio/speech")
    assert first.json == {
        "model": "gpt-4o-mini-tts",
        "input": "Fresh coffee, every morning.",
        "voice": "nova",
        "response_format": "wav",
    }
    assert first.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    # A garbage answer: the offline voice speaks, and says why.
    assert "Piper" in fallback.method and "not a WAV file" in fallback.method


def test_a_video_job_takes_its_voice_from_the_speech_route(routed_app: RoutedApp) -> None:
    from tests.marketing.test_video_jobs import wait_video

    with (
        serve("openai") as fake,
        routed_app(
            routes={"speech": "openai:gpt-4o-mini-tts"},
            openai_base_url=f"{fake.url}/v1",
            openai_api_key=OPENAI_KEY,
            job_workers=1,
            analyze_products=False,
        ) as (client, res),
    ):
        acct = make_account(res, credits=60)
        r = client.post(
            "/api/v2/generate/video",
            json={
                "image_base64": base64.b64encode(encode(product_rgb(320, 240))).decode(),
                "script": "Fresh coffee, every morning.",
                "aspect": "1:1",
            },
            headers=acct.key_headers,
        )
        assert r.status_code == 202, r.text
        job = wait_video(client, acct, r.json()["job_id"])
        assert job["status"] == "completed", job
        assert "gpt-4o-mini-tts" in job["details"]["voice"]
        assert job["duration_seconds"] == pytest.approx(SPEECH_SECONDS, abs=0.6)
        assert consistent_balance(res, acct.id) == 10
    assert [s.path for s in fake.seen].count("/v1/audio/speech") == 1


def test_routed_ad_copy_is_the_models_words_held_to_the_platforms_limits(
    routed_app: RoutedApp,
) -> None:
    from tests.marketing.test_ad_http import _poll, shop

    with (
        serve("openai") as fake,
        routed_app(
            routes={"ad_copy": "openai:gpt-4o-mini"},
            openai_base_url=f"{fake.url}/v1",
            openai_api_key=OPENAI_KEY,
            job_workers=1,
            analyze_products=False,
            allow_loopback_urls=True,
        ) as (client, res),
        shop() as base,
    ):
        acct = make_account(res, credits=10)
        r = client.post(
            "/api/v2/ad-pack",
            json={
                "url": f"{base}/product",
                "include_images": False,
                "include_ads": True,
                "include_captions": True,
                "include_video": False,
            },
            headers=acct.key_headers,
        )
        assert r.status_code == 202, r.text
        body = _poll(client, acct, f"/api/v2/ad-pack/{r.json()['job_id']}")
        assert body["status"] == "completed", body
        assert body["credits_used"] == 3 and consistent_balance(res, acct.id) == 7
    captions = {c["platform"]: c for c in body["captions"]}
    assert captions["instagram"]["text"].startswith("instagram: the Trail Bottle, cold all day.")
    assert captions["instagram"]["hashtags"] == ["#hiking"]
    twitter = captions["twitter"]
    assert len(twitter["text"]) <= 280 == twitter["limit"]  # cut to the platform's limit
    assert twitter["text"].endswith("…") and twitter["hashtags"] == []
    (chat,) = [s for s in fake.seen if s.path == "/v1/chat/completions"]
    facts = json.loads(chat.json["messages"][1]["content"][0]["text"].split(": ", 1)[1])
    assert facts["name"] == "Trail Bottle 750 ml" and facts["brand"] == "Peak Goods"


def test_a_blank_routed_output_is_tried_again_then_falls_back(tmp_path: Path) -> None:
    from tests.engines.product_photo.test_product_photo import gallery_avatar, tshirt
    from tests.providers.fakes import OUTPUT_COLOUR

    flat = encode(np.full((120, 90, 3), OUTPUT_COLOUR, np.uint8), "PNG")
    avatar, landmarks = gallery_avatar(0)
    params = TryOnParams(category="clothing", num_outputs=1, size=384, landmarks=landmarks)
    with serve("replicate") as fake:
        fake.output = (flat, "image/png", "png")
        settings = Settings(
            data_dir=tmp_path,
            routes={"tryon": "replicate:cuuupid/idm-vton:c871bb9b0466"},
            replicate_base_url=fake.url,
            replicate_api_token=REPLICATE_TOKEN,
        )
        engines, backends = route_engines(build_engines(), settings)
        assert backends is not None
        hosted = engines["tryon"]
        assert isinstance(hosted, TryOnHosted)
        (planned,) = hosted.plan(EngineInputs(avatar, {"product": tshirt()}), params)
        out = planned.render()
        backends.close()
    assert out.data["provider"] == "offline" and "blank" in out.data["provider_failed"]
    seeds = [s.json["input"]["seed"] for s in fake.seen if s.path.endswith("/predictions")]
    assert seeds == [0, 0 + RESEED]
