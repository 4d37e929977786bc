"""Benchmark the edit engine on a few typical prompts.

Run: ``.venv/bin/python bench/bench_edit.py [--megapixels 1.0] [--repeat 3]``

Prints, per prompt, the median wall and CPU time of ``EditEngine.run`` on the scikit-image
astronaut photo resized to about ``--megapixels``, and CPU ms per MP, plus the cost of
``EditEngine.validate`` (the pre-charge prompt check). Prompts that need the subject mask
include one U²-Net-p run. OpenCV runs on one thread so the CPU figures are per core (ONNX
Runtime keeps its default of two threads, so mask rows count both). On a shared machine, read
the CPU column: the wall column also measures the neighbours.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial

import cv2
import numpy as np
import numpy.typing as npt
from skimage import data

from _common import ms_per_mp, print_table, resize_to_area, time_call
from pixelmill.engines.base import EngineInputs
from pixelmill.engines.edit import EditEngine, EditParams
from pixelmill.engines.runtime.segmentation import salient_mask

PROMPTS = (
    "make it warmer",
    "more contrast, slightly more saturated",
    "black and white",
    "sepia and add a vignette",
    "sharpen",
    "oil painting",
    "anime style",
    "make the suit blue",
    "blur the background",
    "remove the background",
    "replace the background with a marble countertop",
    "make the background darker",
)


def sample(name: str) -> npt.NDArray[np.uint8]:
    """A scikit-image sample photo (bundled, offline)."""
    return np.ascontiguousarray(getattr(data, name)(), dtype=np.uint8)


def cpu_seconds(fn: Callable[[], object], repeat: int) -> float:
    """Median CPU time (all threads of this process) of ``fn``: on a shared machine the wall
    time mostly measures the neighbours, the CPU time what the call itself costs."""
    fn()
    times: list[float] = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--megapixels", type=float, default=1.0, help="test image size")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per row (median)")
    args = parser.parse_args()
    cv2.setNumThreads(1)

    image = resize_to_area(sample("astronaut"), args.megapixels)
    h, w = image.shape[:2]
    engine = EditEngine()
    engine.load()

    rows: list[dict[str, object]] = []
    for prompt in PROMPTS:
        params = EditParams(prompt=prompt)
        steps = ", ".join(step.kind for step in engine.steps(prompt))
        call = partial(engine.run, EngineInputs(image), params)
        s = time_call(call, repeat=args.repeat)
        c = cpu_seconds(call, args.repeat)
        rows.append(
            {
                "prompt": prompt,
                "steps": steps,
                "wall ms": s * 1000.0,
                "CPU ms": c * 1000.0,
                "CPU ms per MP": ms_per_mp(c, h, w),
            }
        )
    s = time_call(partial(salient_mask, image), repeat=args.repeat)
    c = cpu_seconds(partial(salient_mask, image), args.repeat)
    rows.append(
        {
            "prompt": "(U²-Net-p subject mask alone, included above where a step needs it)",
            "steps": "salient_mask",
            "wall ms": s * 1000.0,
            "CPU ms": c * 1000.0,
            "CPU ms per MP": ms_per_mp(c, h, w),
        }
    )
    params = EditParams(prompt=PROMPTS[1])
    s = time_call(lambda: engine.validate(params), repeat=200, warmup=5)
    rows.append({"prompt": "(validate only)", "steps": "interpret", "wall ms": s * 1000.0,
                 "CPU ms": s * 1000.0, "CPU ms per MP": 0.0})  # fmt: skip
    print_table(rows, f"EditEngine.run on a {w}×{h} photo, strength 0.75, OpenCV 1 thread")


if __name__ == "__main__":
    main()
