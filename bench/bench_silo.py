"""Benchmark the silo engine: the one-off cut-out of a ~1 MP product photo, then each
1600 px silo variant rendered from it (median CPU and wall ms per shot).

Run: ``.venv/bin/python bench/bench_silo.py [--repeat 3]``
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from skimage import data

from _common import resize_to_area
from pixelmill.engines.base import EngineInputs
from pixelmill.engines.silo import SiloEngine, SiloParams
from pixelmill.engines.silo.engine import VARIANTS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    coffee = data.coffee()  # type: ignore[no-untyped-call]
    photo = np.ascontiguousarray(resize_to_area(coffee, 1.0), dtype=np.uint8)
    engine = SiloEngine()
    engine.load()
    inputs = EngineInputs(photo)
    params = SiloParams(num_outputs=len(VARIANTS))
    engine.plan(inputs, params)  # warm up
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    planned = engine.plan(inputs, params)
    print(
        f"cut-out of {photo.shape[1]}x{photo.shape[0]}: "
        f"{(time.perf_counter() - start_wall) * 1000:.0f} ms wall, "
        f"{(time.process_time() - start_cpu) * 1000:.0f} ms CPU"
    )
    print(f"{'variant':28} {'wall ms':>8} {'CPU ms':>8}")
    for item in planned:
        walls, cpus = [], []
        for _ in range(args.repeat):
            w, c = time.perf_counter(), time.process_time()
            item.render()
            walls.append(time.perf_counter() - w)
            cpus.append(time.process_time() - c)
        print(
            f"{item.label:28} {statistics.median(walls) * 1000:8.0f} "
            f"{statistics.median(cpus) * 1000:8.0f}"
        )


if __name__ == "__main__":
    main()
