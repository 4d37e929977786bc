"""Benchmark the ``colorize`` engine: colourfulness and PSNR against the true colours, and speed.

Run by hand: ``.venv/bin/python bench/bench_colorize.py [--repeat 3]``.

Each scikit-image colour photo (offline) is resized to about 1 MP and reduced to its CIELAB
lightness (a grey image whose true colours are known). It is then colourised three ways: the
procedural default (no reference, no palette), with a *different* photo as reference, and with
its own colour original as reference (an upper bound, as in ``docs/models.md``). Reported:
Hasler–Süsstrunk colourfulness, PSNR against the original, and ms/MP (median after a warm-up).
"""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np
import numpy.typing as npt
from skimage import data as skdata

from _common import ms_per_mp, print_table, psnr, resize_to_area, time_call
from pixelmill.engines.base import EngineInputs
from pixelmill.engines.colorize import ColorizeEngine, ColorizeParams
from pixelmill.engines.runtime.colour import from_lab, to_lab
from pixelmill.engines.runtime.measures import colourfulness

Image = npt.NDArray[np.uint8]
OTHER = {"astronaut": "coffee", "coffee": "chelsea", "chelsea": "coffee"}


def _photo(name: str) -> Image:
    return resize_to_area(np.asarray(getattr(skdata, name)(), dtype=np.uint8), 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    engine = ColorizeEngine()
    engine.load()
    rows: list[dict[str, object]] = []
    for name in ("astronaut", "coffee", "chelsea"):
        original = _photo(name)
        lab = to_lab(original)
        lab[..., 1:] = 0.0
        grey = from_lab(lab)
        h, w = grey.shape[:2]
        rows.append(
            {
                "photo": name,
                "mode": "grey input",
                "colourfulness": round(colourfulness(grey), 1),
                "PSNR vs original": round(psnr(grey, original), 2),
                "ms/MP": "",
            }
        )
        cases: list[tuple[str, dict[str, Image]]] = [
            ("default (procedural)", {}),
            (f"reference: {OTHER[name]}", {"reference": _photo(OTHER[name])}),
            ("reference: own original", {"reference": original}),
        ]
        for mode, extra in cases:
            inputs = EngineInputs(grey, extra)
            result = engine.run(inputs, ColorizeParams())
            seconds = time_call(partial(engine.run, inputs, ColorizeParams()), repeat=args.repeat)
            out = result.images[0].pixels
            rows.append(
                {
                    "photo": name,
                    "mode": mode,
                    "colourfulness": round(colourfulness(out), 1),
                    "PSNR vs original": round(psnr(out, original), 2),
                    "ms/MP": round(ms_per_mp(seconds, h, w)),
                }
            )
    print_table(rows, "colorize: colour and PSNR against the true colours (about 1 MP)")


if __name__ == "__main__":
    main()
