"""Background removal beside rembg, in the same run: pixelmill's ``POST /api/v2/remove-background``
on a live uvicorn server against rembg's own library call ``rembg.remove(bytes)`` (same u2netp
model, PNG bytes out), on the same ~1 MP JPEG.

pixelmill is measured through the real HTTP endpoint: a fresh SQLite database and an enterprise
API key, one uvicorn process started the way ``bench/bench_account.py`` starts it; each request
sends the JPEG as base64 JSON and waits for the response (decode, engine, PNG encode, storage,
signed URL, credit capture). rembg runs in this benchmark's process. The two are called
alternately, one call each per round, so a change in the shared machine's load hits both alike;
the ratio is of the p50 latencies. ``rembg.remove(bytes)`` without a ``session`` builds a new
ONNX session on every call (that is the library call as documented); the p50 with one reused
session is printed too.

    .venv/bin/python bench/bench_background_vs_rembg.py [--rounds 15] [--photo astronaut]
    .venv/bin/python bench/bench_background_vs_rembg.py --png   # the PNG encoder alone
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import statistics
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import numpy.typing as npt
from PIL import Image
from skimage import data

from _common import resize_to_area
from _server import enterprise_account, free_port, server_env, start_uvicorn, wait_up


def photo_jpeg(name: str, megapixels: float = 1.0) -> bytes:
    rgb = resize_to_area(np.ascontiguousarray(getattr(data, name)())[..., :3], megapixels)
    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def start_server(work: Path) -> tuple[subprocess.Popen[bytes], int, str]:
    env = server_env(work)
    key = enterprise_account(env, "bench@example.com", credits=100_000)
    port = free_port()
    return start_uvicorn("pixelmill.asgi:app", port, env), port, key


def post(url: str, key: str, body: bytes) -> dict[str, object]:
    request = urllib.request.Request(
        url,
        data=body,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        result: dict[str, object] = json.loads(response.read())
    return result


def p50_ms(times: list[float]) -> float:
    return statistics.median(times) * 1000.0


def bench_http(args: argparse.Namespace) -> None:
    import rembg
    from rembg import new_session

    jpeg = photo_jpeg(args.photo)
    size = Image.open(io.BytesIO(jpeg)).size
    print(f"photo: skimage.data.{args.photo} at {size[0]}x{size[1]}, JPEG {len(jpeg)} bytes")
    body = json.dumps({"image_base64": base64.b64encode(jpeg).decode()}).encode()
    work = Path(tempfile.mkdtemp(prefix="pm-bench-bg-"))
    server, port, key = start_server(work)
    session = new_session("u2netp")
    ours: list[float] = []
    theirs: list[float] = []
    reused: list[float] = []
    loads = [loadavg()]
    try:
        wait_up(f"http://127.0.0.1:{port}/healthz")
        url = f"http://127.0.0.1:{port}/api/v2/remove-background"
        # Warm-up: model sessions, first-request imports, rembg's first session.
        first = post(url, key, body)
        rembg.remove(jpeg)
        rembg.remove(jpeg, session=session)
        details = first.get("details", {})
        print("pixelmill method:", details.get("method") if isinstance(details, dict) else "?")
        for _ in range(args.rounds):
            start = time.perf_counter()
            post(url, key, body)
            ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            rembg.remove(jpeg)
            theirs.append(time.perf_counter() - start)
            start = time.perf_counter()
            rembg.remove(jpeg, session=session)
            reused.append(time.perf_counter() - start)
        loads.append(loadavg())
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(
        f"rounds: {args.rounds}, load average (1/5/15 min) before: {loads[0]}, after: {loads[-1]}"
    )
    print(f"pixelmill POST /api/v2/remove-background p50: {p50_ms(ours):7.1f} ms")
    print(f"rembg.remove(bytes)                      p50: {p50_ms(theirs):7.1f} ms")
    print(f"rembg.remove(bytes, session=reused)      p50: {p50_ms(reused):7.1f} ms")
    print(f"ratio pixelmill / rembg.remove(bytes):        {p50_ms(ours) / p50_ms(theirs):.2f}x")
    print(f"ratio pixelmill / rembg with a reused session: {p50_ms(ours) / p50_ms(reused):.2f}x")


def bench_png(args: argparse.Namespace) -> None:
    """The PNG encoder on the two PNG-heavy results: a 1 MP cut-out (RGBA) and a 4 MP upscale
    (RGB), against Pillow at zlib level 3 (the encoder before) - alternating, same run."""
    from pixelmill.engines.background.engine import BackgroundRemovalEngine
    from pixelmill.engines.base import EngineInputs
    from pixelmill.imaging.encode import encode_image

    rgb = resize_to_area(np.ascontiguousarray(getattr(data, args.photo)())[..., :3], 1.0)
    engine = BackgroundRemovalEngine()
    engine.load()
    cutout = engine.run(EngineInputs(rgb, {}), engine.Params()).images[0].pixels
    upscaled = resize_to_area(rgb, 4.0)

    def pillow(pixels: npt.NDArray[np.uint8]) -> bytes:
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, format="PNG", compress_level=3)
        return buffer.getvalue()

    print(f"load average before: {loadavg()}")
    for label, pixels in (("1 MP RGBA cut-out", cutout), ("4 MP RGB upscale", upscaled)):
        times: dict[str, list[float]] = {"pillow level 3 (before)": [], "encode_image": []}
        sizes: dict[str, int] = {}
        for _ in range(args.rounds):
            for name, fn in (
                ("pillow level 3 (before)", pillow),
                ("encode_image", lambda p: encode_image(p, "png")),
            ):
                start = time.perf_counter()
                out = fn(pixels)
                times[name].append(time.perf_counter() - start)
                sizes[name] = len(out)
        for name, ts in times.items():
            print(f"{label:18s} {name:24s} p50 {p50_ms(ts):7.1f} ms  {sizes[name]:>9,d} bytes")
    print(f"load average after: {loadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--photo", default="astronaut")
    parser.add_argument("--png", action="store_true", help="time the PNG encoder alone")
    args = parser.parse_args()
    if args.png:
        bench_png(args)
    else:
        bench_http(args)


if __name__ == "__main__":
    main()
