"""Benchmark the avatar engines: milliseconds per output image.

Run: ``.venv/bin/python bench/bench_avatar.py [--height 1024] [--repeat 3]``

Guided: one avatar per prompt of a fixed set (wall time and CPU time of ``render()``, median
over the prompts), plus ``plan()`` alone (reading the prompt, settling the looks). Reference:
on the astronaut photo (``skimage.data.astronaut()``, 512²), ``plan()`` alone (person detection,
what runs before credits are reserved), the first render of a plan (it also makes the shared
cut-out) and each further render. Model loading is excluded (a warm-up run first). On a shared
machine, read the CPU column: the wall column also measures the neighbours.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from skimage import data

from _common import print_table
from pixelmill.engines.avatar import (
    GuidedAvatarEngine,
    GuidedAvatarParams,
    ReferenceAvatarEngine,
    ReferenceAvatarParams,
)
from pixelmill.engines.base import EngineInputs

PROMPTS = (
    "young woman, long red hair, green sweater, blue jeans, waving, park",
    "middle-aged man, beard, navy suit, office",
    "senior woman, grey bob, glasses, lavender cardigan, studio",
    "teen boy, curly hair, orange hoodie, shorts, city",
    "woman, afro, yellow dress, beach",
    "man, buzz cut, white t-shirt, black jeans, hands in pockets",
)


def photo(name: str) -> npt.NDArray[np.uint8]:
    """A scikit-image sample photo (bundled, offline)."""
    return np.ascontiguousarray(getattr(data, name)(), dtype=np.uint8)


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def median_ms(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return (
        1000 * statistics.median(s[0] for s in samples),
        1000 * statistics.median(s[1] for s in samples),
    )


def bench_guided(height: int, repeat: int) -> list[dict[str, object]]:
    engine = GuidedAvatarEngine()
    engine.run(EngineInputs.none(), GuidedAvatarParams(prompt=PROMPTS[0], height=height))
    renders: list[tuple[float, float]] = []
    plans: list[tuple[float, float]] = []
    for _ in range(repeat):
        for prompt in PROMPTS:
            params = GuidedAvatarParams(prompt=prompt, height=height)
            plans.append(timed(lambda p=params: engine.plan(EngineInputs.none(), p)))  # type: ignore[misc]
            planned = engine.plan(EngineInputs.none(), params)
            renders.append(timed(planned[0].render))
    rows: list[dict[str, object]] = []
    for name, samples in (("guided: plan()", plans), ("guided: render one avatar", renders)):
        wall, cpu = median_ms(samples)
        rows.append({"step": name, "wall ms": f"{wall:.0f}", "cpu ms": f"{cpu:.0f}"})
    return rows


def bench_reference(height: int, repeat: int) -> list[dict[str, object]]:
    engine = ReferenceAvatarEngine()
    image = photo("astronaut")
    params = ReferenceAvatarParams(num_outputs=4, height=height)
    engine.run(EngineInputs(image), ReferenceAvatarParams(height=height))
    plans, firsts, others = [], [], []
    for _ in range(repeat):
        plans.append(timed(lambda: engine.plan(EngineInputs(image), params)))
        planned = engine.plan(EngineInputs(image), params)
        firsts.append(timed(planned[0].render))
        others += [timed(p.render) for p in planned[1:]]
    rows: list[dict[str, object]] = []
    for name, samples in (
        ("reference: plan() (person detection)", plans),
        ("reference: first render (+ cut-out)", firsts),
        ("reference: each further render", others),
    ):
        wall, cpu = median_ms(samples)
        rows.append({"step": name, "wall ms": f"{wall:.0f}", "cpu ms": f"{cpu:.0f}"})
    first_wall, _ = median_ms(firsts)
    other_wall, _ = median_ms(others)
    plan_wall, _ = median_ms(plans)
    per_image = (plan_wall + first_wall + 3 * other_wall) / 4
    rows.append({"step": "reference: per image in a 4-variant call", "wall ms": f"{per_image:.0f}",
                 "cpu ms": ""})  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--height", type=int, default=1024, help="avatar height in pixels")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds (median)")
    args = parser.parse_args()
    print(f"avatar height {args.height} (width {round(args.height * 3 / 4)})")
    print_table(bench_guided(args.height, args.repeat) + bench_reference(args.height, args.repeat))


if __name__ == "__main__":
    main()
