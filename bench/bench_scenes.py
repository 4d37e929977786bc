"""Benchmark the scene compositor and the replace-background engine.

Run: ``.venv/bin/python bench/bench_scenes.py [--size 1024] [--repeat 3]``

Prints, per scene, the median time to render one ``size`` × ``size`` scene from a prepared
cut-out (backdrop painting + shadows + reflection + harmonisation + dithered conversion): wall
time, CPU time, and CPU ms per output megapixel; then the one-off cut-out cost (U²-Net-p +
decontamination) and replace-background on a photo of about 1 MP with and without
segmentation. OpenCV runs on one thread so the CPU figures are per core (ONNX Runtime keeps its
default of two threads, so the segmentation rows count both). On a shared machine, read the CPU
column: the wall column also measures the neighbours.
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
from pixelmill.engines.replace_background import parse_backdrop_prompt, replace_background
from pixelmill.engines.runtime.layers import prepare_cutout
from pixelmill.engines.runtime.scenery import SCENES, render_scene
from pixelmill.engines.runtime.segmentation import U2NETP, mask_to_alpha, salient_mask

U8 = npt.NDArray[np.uint8]


def sample(name: str) -> U8:
    """A scikit-image sample photo (bundled, offline)."""
    return np.ascontiguousarray(getattr(data, name)(), dtype=np.uint8)


def product_photo() -> U8:
    """The coffee cup photo at about 1 MP."""
    return resize_to_area(sample("coffee"), 1.0)


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
    parser.add_argument("--size", type=int, default=1024, help="scene side in pixels")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per row (median)")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    U2NETP.load()

    photo = product_photo()
    h, w = photo.shape[:2]
    cutout, how = prepare_cutout(photo)
    cut_s = time_call(lambda: prepare_cutout(photo), repeat=args.repeat)
    cut_c = cpu_seconds(lambda: prepare_cutout(photo), args.repeat)

    rows: list[dict[str, object]] = []
    for name in SCENES:
        call = partial(render_scene, cutout, name, 0, args.size)
        s = time_call(call, repeat=args.repeat)
        c = cpu_seconds(call, args.repeat)
        rows.append(
            {
                "scene": name,
                "wall ms": s * 1000.0,
                "CPU ms": c * 1000.0,
                "CPU ms per output MP": ms_per_mp(c, args.size, args.size),
            }
        )
    mp = args.size * args.size / 1e6
    mean_wall = statistics.mean(float(str(r["wall ms"])) for r in rows)
    mean_cpu = statistics.mean(float(str(r["CPU ms"])) for r in rows)
    rows.append(
        {
            "scene": "(mean over scenes)",
            "wall ms": mean_wall,
            "CPU ms": mean_cpu,
            "CPU ms per output MP": mean_cpu / mp,
        }
    )
    print_table(rows, f"render_scene, {args.size}×{args.size}, OpenCV 1 thread")

    alpha = mask_to_alpha(salient_mask(photo))
    rb_rows: list[dict[str, object]] = [
        {
            "step": f"cut-out ({how}, decontaminated)",
            "wall ms": cut_s * 1000.0,
            "CPU ms": cut_c * 1000.0,
            "CPU ms per MP": ms_per_mp(cut_c, h, w),
        }
    ]
    for prompt in ("white studio", "blue background", "marble countertop", "sunset beach",
                   "city lights at night", "pink to orange gradient"):  # fmt: skip
        request = parse_backdrop_prompt(prompt)
        call = partial(replace_background, photo, alpha, request, 0)
        s = time_call(call, args.repeat)
        c = cpu_seconds(call, args.repeat)
        rb_rows.append(
            {
                "step": f"replace_background '{prompt}' ({request.description}), mask given",
                "wall ms": s * 1000.0,
                "CPU ms": c * 1000.0,
                "CPU ms per MP": ms_per_mp(c, h, w),
            }
        )
    request = parse_backdrop_prompt("marble countertop")

    def with_segmentation() -> object:
        return replace_background(photo, mask_to_alpha(salient_mask(photo)), request, 0)

    s = time_call(with_segmentation, repeat=args.repeat)
    c = cpu_seconds(with_segmentation, args.repeat)
    rb_rows.append(
        {
            "step": "replace_background 'marble countertop' incl. segmentation",
            "wall ms": s * 1000.0,
            "CPU ms": c * 1000.0,
            "CPU ms per MP": ms_per_mp(c, h, w),
        }
    )
    print_table(rb_rows, f"cut-out and replace_background on a {w}×{h} photo")


if __name__ == "__main__":
    main()
