"""The ``pixelpanda`` SDK from PyPI, unchanged, against a live pixelmill: background removal and
upscaling from a path, bytes and a URL; credits go down by the spec's price; 402 keeps the
balance."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from fastapi import FastAPI
from PIL import Image

from pixelmill.resources import Resources
from tests.clients.harness import run_client
from tests.support.accounts import make_account
from tests.support.credits import balance_of
from tests.support.images import png_bytes
from tests.support.servers import live_server, serve_bytes


def test_sdk_remove_background_and_upscale(
    app: FastAPI, resources: Resources, tmp_path: Path
) -> None:
    acct = make_account(resources, credits=20)
    image_path = tmp_path / "bottle.png"
    image_path.write_bytes(png_bytes(96, 72))
    with (
        serve_bytes({"/bottle.png": (200, "image/png", png_bytes(96, 72))}) as files,
        live_server(app) as base,
    ):
        out = run_client(
            f"""
            import json, requests
            from pixelpanda import PixelPanda
            pp = PixelPanda(api_key={acct.api_key!r}, base_url={base!r})
            path, url = {str(image_path)!r}, {files + "/bottle.png"!r}
            data = open(path, "rb").read()
            results = {{}}
            results["rb_path"] = pp.remove_background(path)
            results["rb_bytes"] = pp.remove_background(data)
            results["rb_url"] = pp.remove_background(url)
            results["up2_path"] = pp.upscale(path, scale=2)
            results["up4_bytes"] = pp.upscale(data, scale=4, quality="fast")
            results["up8_url"] = pp.upscale(url, scale=8, quality="balanced")
            sizes = {{}}
            for name, r in results.items():
                content = requests.get(r["result_url"], timeout=60).content
                open("{tmp_path}/" + name, "wb").write(content)
            print(json.dumps({{k: {{"credits_used": v["credits_used"],
                                   "credits_remaining": v["credits_remaining"],
                                   "details": v.get("details", {{}})}}
                              for k, v in results.items()}}))
            """
        )
    for name in ("rb_path", "rb_bytes", "rb_url"):
        im = Image.open(tmp_path / name)
        assert im.format == "PNG" and im.mode == "RGBA" and im.size == (96, 72)
        alpha = np.asarray(im)[..., 3]
        assert alpha.min() < 20 and alpha.max() > 235  # a real cut-out
        assert out[name]["credits_used"] == 1
    for name, scale in (("up2_path", 2), ("up4_bytes", 4), ("up8_url", 8)):
        im = Image.open(tmp_path / name)
        assert im.size == (96 * scale, 72 * scale)
        assert out[name]["details"]["width"] == 96 * scale
        assert out[name]["details"]["height"] == 72 * scale
        assert out[name]["credits_used"] == (2 if scale == 8 else 1)
    # 3 removals (1 each) + 2x (1) + 4x (1) + 8x (2) = 7
    assert balance_of(resources, acct.id) == 13
    assert out["up8_url"]["credits_remaining"] == 13


def test_sdk_insufficient_credits(app: FastAPI, resources: Resources) -> None:
    acct = make_account(resources, credits=1)
    with live_server(app) as base:
        out = run_client(
            f"""
            import base64, json
            from pixelpanda import PixelPanda, PixelPandaError
            pp = PixelPanda(api_key={acct.api_key!r}, base_url={base!r})
            png = base64.b64decode({__import__("base64").b64encode(png_bytes(40, 30)).decode()!r})
            try:
                pp.upscale(png, scale=8)
                print(json.dumps({{"raised": False}}))
            except PixelPandaError as e:
                print(json.dumps({{"raised": True, "status": e.status_code, "detail": e.detail}}))
            """
        )
    assert out["raised"] and out["status"] == 402
    assert "Insufficient credits" in out["detail"]
    assert balance_of(resources, acct.id) == 1
