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
from bench_jobs import make_key
from bench_sr import photo
from pixelmill.app import create_app
from pixelmill.config import Settings
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
    mp = img.shape[0] * img.shape[1] / 1e6
    load()
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="bench-upscale-") as tmp:
        settings = Settings(
            env="testing",
            secret_key="bench-" + "x" * 40,
            database_url=f"sqlite:///{Path(tmp) / 'bench.db'}",
            data_dir=Path(tmp) / "data",
            analyze_products=False,
        )
        upgrade(settings.resolved_database_url)
        resources = build_resources(settings)
        key = make_key(resources, 1000)
        headers = {"Authorization": f"Bearer {key}"}
        try:
            with TestClient(create_app(settings, resources)) as client:
                for scale in (int(s) for s in args.scales.split(",")):
                    engine: list[float] = []
                    for _ in range(args.repeat):
                        t = time.perf_counter()
                        upscale_learned(img, scale)  # type: ignore[arg-type]
                        engine.append(time.perf_counter() - t)
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
                            server.append(float(r.json()["processing_time"]))
                            method = r.json()["details"].get("method", "")
                        rows.append(
                            {
                                "scale": f"x{scale}",
                                "input/output": fmt,
                                "method": method,
                                "request ms/MP (median)": statistics.median(wall) * 1000 / mp,
                                "request ms/MP (min)": min(wall) * 1000 / mp,
                                "processing_time ms/MP (median)": statistics.median(server)
                                * 1000
                                / mp,
                                "engine alone ms/MP (median)": statistics.median(engine)
                                * 1000
                                / mp,
                            }
                        )
        finally:
            resources.close()
    print_table(
        rows, f"POST /api/v2/upscale, quality balanced, {img.shape[1]}x{img.shape[0]} input"
    )


if __name__ == "__main__":
    main()
