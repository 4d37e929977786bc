"""Score exported pixelmill-sr networks on the hold-out exactly as ``bench/bench_sr.py`` does,
before they are shipped: the 10 held-out photos (``data.split``, seed 0) under every condition of
``data.EVAL_DEGRADATIONS``, LR made by ``data.degrade`` from the uint8 RGB original, each network
run through the engine's own pipeline (``pixelmill.engines.upscale.learned.run_network``: tiles,
luma, bicubic colour, uint8 output), PSNR-Y gain over the PIL bicubic upscale of the same LR
image (``bench/_common.psnr_y``, ``scale`` pixels shaved).

Run with the server's venv (onnxruntime, no torch), from the repository root::

    .venv/bin/python training/sr/score.py runs/x2.onnx runs/x2-high.onnx:mirror [--threads 1]

``:mirror`` adds the left-right mirror pass (as ``high`` ×2 does in the engine).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from data import EVAL_DEGRADATIONS, crop_to_multiple, degrade, load_rgb, split  # noqa: E402

from _common import psnr_y  # noqa: E402
from pixelmill.engines.runtime.onnx import OnnxModel  # noqa: E402
from pixelmill.engines.upscale.learned import network_meta, run_network  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", help="ONNX files, each optionally with ':mirror'")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "sr-train")
    ap.add_argument(
        "--photos",
        choices=["held-out", "skimage"],
        default="held-out",
        help="the 10 held-out training-set photos, or bench_sr's 7 scikit-image photos",
    )
    ap.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads")
    ap.add_argument("--conditions", default="", help="comma-separated indices (default: all)")
    ap.add_argument("--decimals", type=int, default=2, help="decimals of the mean gains")
    args = ap.parse_args()

    specs = []
    for spec in args.models:
        path, _, opt = spec.partition(":")
        model = OnnxModel(Path(path), intra_op_threads=args.threads)
        specs.append((spec, model, network_meta(model), opt == "mirror"))
    scales = {int(json.loads(m[2]["pixelmill_config"])["scale"]) for m in specs}
    assert len(scales) == 1, "score networks of one scale at a time"
    scale = scales.pop()
    if args.photos == "skimage":
        from bench_sr import PHOTOS_COLOUR, PHOTOS_GREY, photo

        rgb = [photo(n) for n in PHOTOS_COLOUR]
        rgb += [np.repeat(photo(n)[..., None], 3, axis=2) for n in PHOTOS_GREY]
        images = [crop_to_multiple(np.ascontiguousarray(x), scale) for x in rgb]
    else:
        _, val = split(args.data, seed=0)
        images = [crop_to_multiple(load_rgb(f), scale) for f in val]
    names = list(EVAL_DEGRADATIONS)
    if args.conditions:
        names = [names[int(i)] for i in args.conditions.split(",")]
    means: dict[str, list[float]] = {s[0]: [] for s in specs}
    header = f"{'x' + str(scale) + ' condition':34s} {'bicubic':>8s}" + "".join(
        f" {Path(s[0]).name[:22]:>22s}" for s in specs
    )
    print(header)
    for name in names:
        d = EVAL_DEGRADATIONS[name]
        bic: list[float] = []
        gains: dict[str, list[float]] = {s[0]: [] for s in specs}
        for hr in images:
            h, w = hr.shape[:2]
            lr = degrade(hr, scale, d)
            up = np.asarray(Image.fromarray(lr).resize((w, h), Image.Resampling.BICUBIC))
            b = psnr_y(up, hr, shave=scale)
            bic.append(b)
            for spec, model, meta, mirror in specs:
                out = run_network(lr, model, meta, mirror=mirror)
                gains[spec].append(psnr_y(out, hr, shave=scale) - b)
        row = f"{name:34s} {statistics.fmean(bic):8.2f}"
        for spec, *_ in specs:
            g = statistics.fmean(gains[spec])
            means[spec].append(g)
            row += f" {g:+14.{args.decimals}f} (w {min(gains[spec]):+.2f})"
        print(row, flush=True)
    row = f"{'mean over conditions':34s} {'':8s}"
    for spec, *_ in specs:
        row += f" {statistics.fmean(means[spec]):+14.3f}{'':9s}"
    print(row)


if __name__ == "__main__":
    main()
