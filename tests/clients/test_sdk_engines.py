"""The SDK's ``enhance`` and ``image_to_prompt`` against a live server, unchanged."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI

from pixelmill.resources import Resources
from tests.clients.harness import run_client
from tests.support.accounts import make_account
from tests.support.credits import balance_of
from tests.support.images import encode, photo_rgb
from tests.support.servers import live_server


def test_sdk_enhance_and_image_to_prompt(
    app: FastAPI, resources: Resources, tmp_path: Path
) -> None:
    acct = make_account(resources, credits=5)
    dark = (photo_rgb(240, 160).astype(float) * 0.45).astype("uint8")  # underexposed
    path = tmp_path / "dark.jpg"
    path.write_bytes(encode(dark, "JPEG", quality=92))
    with live_server(app) as base:
        out = run_client(
            f"""
            import json, requests
            from pixelpanda import PixelPanda
            pp = PixelPanda(api_key={acct.api_key!r}, base_url={base!r})
            e = pp.enhance({str(path)!r})
            ok = [requests.get(v["url"], timeout=60).status_code for v in e["details"]["variants"]]
            p = pp.image_to_prompt({str(path)!r})
            print(json.dumps({{"enhance": e, "variant_status": ok, "prompt": p}}))
            """
        )
    e = out["enhance"]
    assert e["status"] == "success" and e["credits_used"] == 1
    assert e["result_url"].startswith("http")
    variants = e["details"]["variants"]
    assert len(variants) >= 4
    assert all(isinstance(v["label"], str) and v["url"].startswith("http") for v in variants)
    assert out["variant_status"] == [200] * len(variants)
    assert e["result_url"] == variants[0]["url"]  # best first
    assert variants[0]["score"] == max(v["score"] for v in variants)
    prompts = out["prompt"]["prompts"]
    for key in ("general", "flux", "midjourney"):
        assert isinstance(prompts[key], str) and len(prompts[key]) > 20
    assert "--ar 3:2" in prompts["midjourney"]
    assert prompts["stable_diffusion"]["positive"] and prompts["stable_diffusion"]["negative"]
    assert out["prompt"]["credits_used"] == 1
    assert balance_of(resources, acct.id) == 3
