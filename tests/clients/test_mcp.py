"""The ``pixelpanda-mcp`` server from PyPI, unchanged, against a live server: its free tools
(no Authorization header, 3 per day per IP) and its ``check_credits`` tool (API key)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from fastapi import FastAPI
from PIL import Image

from pixelmill.resources import Resources
from tests.clients.harness import run_client
from tests.support.accounts import make_account
from tests.support.images import encode, photo_rgb, png_bytes
from tests.support.servers import live_server

SCRIPT = """
import asyncio, json
from pixelpanda_mcp.server import mcp

async def main():
    out = {{}}
    for name, args in {calls!r}:
        try:
            result = await mcp.call_tool(name, args)
            blocks = result[0] if isinstance(result, tuple) else result
            out[name + str(len(out))] = " ".join(getattr(b, "text", "") for b in blocks)
        except Exception as exc:
            out[name + str(len(out))] = "ERROR " + str(exc)
    print(json.dumps(out))

asyncio.run(main())
"""


def test_mcp_free_tools_and_credits(app: FastAPI, resources: Resources, tmp_path: Path) -> None:
    acct = make_account(resources, credits=7)
    src = tmp_path / "bottle.png"
    src.write_bytes(png_bytes(120, 90))
    text_img = photo_rgb(320, 200).copy()
    import cv2

    cv2.putText(text_img, "SALE 50%", (30, 110), cv2.FONT_HERSHEY_SIMPLEX, 1.6, (255, 255, 255), 4)
    text_path = tmp_path / "sale.jpg"
    text_path.write_bytes(encode(text_img, "JPEG", quality=95))
    calls = [
        ("remove_background", {"file_path": str(src), "output_path": str(tmp_path / "nobg.png")}),
        (
            "upscale_image",
            {"file_path": str(src), "scale": 2, "output_path": str(tmp_path / "x2.png")},
        ),
        ("remove_text", {"file_path": str(text_path), "output_path": str(tmp_path / "clean.png")}),
        ("analyze_image", {"file_path": str(text_path)}),
        ("check_credits", {}),
        ("remove_background", {"file_path": str(src)}),
        ("remove_background", {"file_path": str(src)}),
        ("remove_background", {"file_path": str(src)}),
    ]
    with live_server(app) as base:
        out = run_client(
            SCRIPT.format(calls=calls),
            env={"PIXELPANDA_API_URL": base, "PIXELPANDA_API_TOKEN": acct.api_key},
        )
    texts = list(out.values())
    assert "Background removed" in texts[0] and "remaining today: 2" in texts[0]
    nobg = Image.open(tmp_path / "nobg.png")
    assert nobg.mode == "RGBA" and nobg.size == (120, 90)
    assert np.asarray(nobg)[..., 3].min() < 20

    assert "Upscaled 2x: 120x90 -> 240x180" in texts[1]
    assert Image.open(tmp_path / "x2.png").size == (240, 180)

    assert "Text removed" in texts[2]
    assert Image.open(tmp_path / "clean.png").size == (320, 200)

    analysis = texts[3]
    assert "Image: 320x200 JPEG" in analysis
    assert "Colors:" in analysis and "Text found:" in analysis and "SALE" in analysis
    assert "Alt text:" in analysis

    assert acct.email in texts[4] and "7" in texts[4]

    assert "remaining today: 1" in texts[5] and "remaining today: 0" in texts[6]
    assert "Free tier limit reached" in texts[7]
