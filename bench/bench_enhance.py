"""Benchmark the ``enhance`` engine: speed at about 1 MP and how much it raises the quality score.

Run by hand: ``.venv/bin/python bench/bench_enhance.py [--repeat 3]``.

Inputs are scikit-image photos (offline) resized to about 1 MP, as they are and degraded three
ways: darkened (×0.35 + 12), low contrast (around grey, ×0.45) and noisy (Gaussian σ = 12 per
channel). Reported: ms/MP for the whole engine (all variants in parallel plus scoring, median
of ``--repeat`` runs after a warm-up), the original's score, the chosen variant and its score.
"""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np
import numpy.typing as npt
from skimage import data as skdata

from _common import ms_per_mp, print_table, resize_to_area, time_call
from pixelmill.engines.base import EngineInputs
from pixelmill.engines.enhance import EnhanceEngine, EnhanceParams

Image = npt.NDArray[np.uint8]


def _photo(name: str) -> Image:
    return np.asarray(getattr(skdata, name)(), dtype=np.uint8)


def _degrade(img: Image, kind: str) -> Image:
    x = img.astype(np.float32)
    if kind == "dark":
        x = x * 0.35 + 12.0
    elif kind == "low contrast":
        x = (x - 128.0) * 0.45 + 110.0
    elif kind == "noisy":
        x = x + np.random.default_rng(0).normal(0.0, 12.0, x.shape).astype(np.float32)
    return np.asarray(np.clip(x, 0, 255), dtype=np.uint8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    engine = EnhanceEngine()
    engine.load()
    rows: list[dict[str, object]] = []
    for name in ("astronaut", "coffee", "chelsea"):
        base = resize_to_area(_photo(name), 1.0)
        for kind in ("as is", "dark", "low contrast", "noisy"):
            img = _degrade(base, kind)
            h, w = img.shape[:2]
            seconds = time_call(
                partial(engine.run, EngineInputs(img), EnhanceParams()), repeat=args.repeat
            )
            result = engine.run(EngineInputs(img), EnhanceParams())
            d = result.details
            rows.append(
                {
                    "photo": name,
                    "input": kind,
                    "size": f"{w}x{h}",
                    "variants": len(d["variants"]),
                    "ms/MP": round(ms_per_mp(seconds, h, w)),
                    "original score": d["original_score"],
                    "chosen": d["chosen"],
                    "chosen score": d["score"],
                    "gain": round(d["score"] - d["original_score"], 1),
                }
            )
    print_table(rows, "enhance: speed and score gain (about 1 MP)")


if __name__ == "__main__":
    main()
