"""Benchmark the ``unblur`` engine: PSNR gain on photos blurred with a known Gaussian, and speed.

Run by hand: ``.venv/bin/python bench/bench_deblur.py [--repeat 3]``.

Each scikit-image photo (offline) is resized to about 1 MP, blurred with σ = 1.5, 2 and 3 px
(OpenCV ``GaussianBlur``, then rounded to uint8) and restored with the blur estimated from the
image (no σ given). Reported: the estimated σ, PSNR of the blurred and the restored image
against the sharp original (all channels), the gain, and ms/MP (median after a warm-up).
"""

from __future__ import annotations

import argparse
from functools import partial

import cv2
import numpy as np
import numpy.typing as npt
from skimage import data as skdata

from _common import ms_per_mp, print_table, psnr, resize_to_area, time_call
from pixelmill.engines.base import EngineInputs
from pixelmill.engines.deblur import UnblurEngine, UnblurParams

Image = npt.NDArray[np.uint8]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    engine = UnblurEngine()
    rows: list[dict[str, object]] = []
    for name in ("astronaut", "coffee", "chelsea"):
        sharp = resize_to_area(np.asarray(getattr(skdata, name)(), dtype=np.uint8), 1.0)
        h, w = sharp.shape[:2]
        for sigma in (1.5, 2.0, 3.0):
            blurred: Image = np.asarray(cv2.GaussianBlur(sharp, (0, 0), sigma), dtype=np.uint8)
            result = engine.run(EngineInputs(blurred), UnblurParams())
            seconds = time_call(
                partial(engine.run, EngineInputs(blurred), UnblurParams()), repeat=args.repeat
            )
            before, after = psnr(blurred, sharp), psnr(result.images[0].pixels, sharp)
            rows.append(
                {
                    "photo": name,
                    "size": f"{w}x{h}",
                    "true σ": sigma,
                    "estimated σ": result.details["estimated_sigma"],
                    "PSNR blurred": round(before, 2),
                    "PSNR restored": round(after, 2),
                    "gain dB": round(after - before, 2),
                    "ms/MP": round(ms_per_mp(seconds, h, w)),
                }
            )
    print_table(rows, "unblur: PSNR gain against the sharp original (about 1 MP)")


if __name__ == "__main__":
    main()
