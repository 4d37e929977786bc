"""Generative operations routed to a provider (issue 41's first part): product scenes painted
around the product by a masked edit (the product's pixels pasted back, exact), on every
provider protocol, through the engine and through a live scenes job."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from pixelmill.config import Settings
from pixelmill.engines.base import EngineInputs, PlannedImage
from pixelmill.engines.registry import build_engines
from pixelmill.engines.runtime.layers import coverage, crop_cutout, prepare_cutout
from pixelmill.engines.scenes import ScenesParams
from pixelmill.engines.scenes.hosted import ScenesHosted, scene_request
from pixelmill.resources import route_engines
from tests.providers.conftest import RoutedApp
from tests.providers.fakes import OUTPUT_COLOUR, Fake, serve
from tests.providers.test_routed_operations import (
    OPENAI_KEY,
    REPLICATE_TOKEN,
    is_provider_image,
    result_pixels,
)
from tests.support.accounts import make_account
from tests.support.api import upload_product, wait_terminal
from tests.support.credits import consistent_balance
from tests.support.images import product_rgb


def _png(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as im:
        assert im.format == "PNG"
        return np.asarray(im)


def _data_url_png(value: str) -> np.ndarray:
    prefix = "data:image/png;base64,"
    assert value.startswith(prefix), value[:40]
    return _png(base64.b64decode(value[len(prefix) :]))


def _settings(tmp_path: Path, provider: str, fake: Fake) -> Settings:
    routes = {
        "openai": "openai:gpt-image-1",
        "replicate": "replicate:stability-ai/stable-diffusion-inpainting:95b7223104132402",
        "comfyui": "comfyui:scene.json",
    }
    values: dict[str, object] = {"data_dir": tmp_path, "routes": {"scenes": routes[provider]}}
    if provider == "openai":
        values.update(openai_base_url=f"{fake.url}/v1", openai_api_key=OPENAI_KEY)
    elif provider == "replicate":
        values.update(replicate_base_url=fake.url, replicate_api_token=REPLICATE_TOKEN)
    else:
        folder = tmp_path / "workflows"
        folder.mkdir()
        (folder / "scene.json").write_text(
            '{"1": {"class_type": "LoadImage", "inputs": {"image": "{{image}}"}},'
            ' "2": {"class_type": "LoadImage", "inputs": {"image": "{{mask}}"}},'
            ' "3": {"class_type": "KSampler", "inputs": {"seed": "{{seed}}",'
            ' "text": "{{prompt}}", "negative": "{{negative_prompt}}",'
            ' "width": "{{width}}", "height": "{{height}}"}},'
            ' "4": {"class_type": "SaveImage", "inputs": {"images": ["3", 0]}}}'
        )
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
    assert np.abs(out.pixels[far].astype(int) - OUTPUT_COLOUR).max() <= 2
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
    assert [s.path for s in fake.seen].count("/v1/images/edits") == 2
