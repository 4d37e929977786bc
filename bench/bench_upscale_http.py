"""``POST /api/v2/upscale`` end to end (a hand-run benchmark, not a test).

One request at a time through the real app (in-process ``TestClient``, SQLite file, local
storage), with a 1 MP photo (coffee resized to 1225x816) sent as base64. The output format
follows the input's, so a JPEG input gets a JPEG result and a PNG input a PNG result; both are
measured because encoding a 4 MP PNG costs more than the network itself. Reported per input
megapixel: the whole request (median and minimum of ``--repeat``), and the server's own
``processing_time`` (decode, engine, encode, store, ledger), beside the engine alone
(``upscale_learned``, the figure ``bench/bench_sr.py`` reports).

    .venv/bin/python bench/bench_upscale_http.py [--repeat 7] [--scales 2,4]
"""

from __future__ import annotations

import argparse
import base64
import io
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
from fastapi.testclient import TestClient
from PIL import Image

from _common import print_table, resize_to_area
from bench_jobs import make_key, make_settings
from bench_sr import photo, timings
from pixelmill.app import create_app
from pixelmill.db.migrate import upgrade
from pixelmill.engines.upscale.learned import load, upscale_learned
from pixelmill.resources import build_resources


def encoded(img: npt.NDArray[np.uint8], fmt: str) -> str:
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format=fmt, **({"quality": 95} if fmt == "JPEG" else {}))
    return base64.b64encode(buf.getvalue()).decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--scales", default="2,4")
    args = parser.parse_args()
    img = resize_to_area(photo("coffee"), 1.0)
    mp: float = img.shape[0] * img.shape[1] / 1e6

    def per_mp(seconds: float) -> float:
        return seconds * 1000 / mp

    load()
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="bench-upscale-") as tmp:
        settings = make_settings(Path(tmp), "inline", size=1024)
        upgrade(settings.resolved_database_url)
        resources = build_resources(settings)
        headers = {"Authorization": f"Bearer {make_key(resources, 1000)}"}
        try:
            with TestClient(create_app(settings, resources)) as client:
                for scale in (int(s) for s in args.scales.split(",")):
                    engine, _, _ = timings(lambda s=scale: upscale_learned(img, s), args.repeat)  # type: ignore[misc]
                    for fmt in ("JPEG", "PNG"):
                        body = {"image_base64": encoded(img, fmt), "scale": scale}
                        client.post("/api/v2/upscale", json=body, headers=headers)  # warm-up
                        wall: list[float] = []
                        server: list[float] = []
                        for _ in range(args.repeat):
                            t = time.perf_counter()
                            r = client.post("/api/v2/upscale", json=body, headers=headers)
                            wall.append(time.perf_counter() - t)
                            r.raise_for_status()
                            result = r.json()
                            server.append(float(result["processing_time"]))
                        rows.append(
                            {
                                "scale": f"x{scale}",
                                "input/output": fmt,
                                "method": result["details"].get("method", ""),
                                "request ms/MP (median)": per_mp(statistics.median(wall)),
                                "request ms/MP (min)": per_mp(min(wall)),
                                "processing_time ms/MP (median)": per_mp(statistics.median(server)),
                                "engine alone ms/MP (median)": per_mp(engine),
                            }
                        )
        finally:
            resources.close()
    print_table(
        rows, f"POST /api/v2/upscale, quality balanced, {img.shape[1]}x{img.shape[0]} input"
    )


if __name__ == "__main__":
    main()
