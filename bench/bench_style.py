"""Benchmark the ``style_transfer`` engine: ms/MP of each of the eight styles at about 1 MP.

Run by hand: ``.venv/bin/python bench/bench_style.py [--repeat 3]``.

Input: a scikit-image photo (``--photo``, default ``astronaut``; offline) resized to about
1 MP. Also reported: the mean absolute difference from the input (grey levels), to show each
style changes the picture.
"""

from __future__ import annotations

import argparse
from functools import partial
from typing import get_args

import numpy as np
from skimage import data as skdata

from _common import ms_per_mp, print_table, resize_to_area, time_call
from pixelmill.engines.base import EngineInputs
from pixelmill.engines.style import StyleParams, StyleTransferEngine
from pixelmill.engines.style.engine import StyleName


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--photo", default="astronaut", help="a scikit-image sample photo")
    args = parser.parse_args()
    engine = StyleTransferEngine()
    img = resize_to_area(np.asarray(getattr(skdata, args.photo)(), dtype=np.uint8), 1.0)
    h, w = img.shape[:2]
    rows: list[dict[str, object]] = []
    for style in get_args(StyleName):
        params = StyleParams(style=style)
        seconds = time_call(partial(engine.run, EngineInputs(img), params), repeat=args.repeat)
        out = engine.run(EngineInputs(img), params).images[0].pixels
        diff = float(np.abs(out.astype(np.float32) - img.astype(np.float32)).mean())
        rows.append(
            {
                "style": style,
                "size": f"{w}x{h}",
                "ms/MP": round(ms_per_mp(seconds, h, w)),
                "mean |Δ| vs input": round(diff, 1),
            }
        )
    print_table(rows, "style_transfer: speed per style (about 1 MP)")


if __name__ == "__main__":
    main()
