"""Coverage -> fitted opacity/colour -> unmixing, on the 48 held-out pairs, per kind.

The restoration is the engine's own (``src/pixelmill/engines/text_removal/unmix.py``); this
script feeds it either the generator's *true* coverage (``--oracle``: how far the method can go
with a perfect coverage) or an exported model's coverage channel (``--model``, an ONNX file with
8 outputs; outputs are cached under ``runs/``), under several settings
(``--set low=0.1,high=0.5 --set ...``), and prints whole-image PSNR per kind and how many pairs
came out below their input.

    ../../.venv-train/bin/python oracle.py --oracle
    ../../.venv-train/bin/python oracle.py --model runs/v4.onnx --set low=0.2 --set low=0.3

``--inpaint FILE.onnx`` fills opaque pixels with the engine's learned inpainter
(``inpaint.Inpainter``, Telea then that network) instead of Telea alone; it imports pixelmill, so
run it with the server's environment: ``../../.venv/bin/python oracle.py --inpaint ...``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
from data import FONT_POOLS, KINDS, ValPair, split, use_fonts, validation_pairs

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src/pixelmill/engines/text_removal"))
import unmix  # noqa: E402


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return 99.0 if mse == 0 else 10.0 * math.log10(255.0**2 / mse)


def run_onnx(sess: ort.InferenceSession, rgb: np.ndarray) -> np.ndarray:
    h, w = rgb.shape[:2]
    x = np.pad(rgb, ((0, (-h) % 8), (0, (-w) % 8), (0, 0)), mode="reflect")
    x = x.astype(np.float32).transpose(2, 0, 1)[None] / 255.0
    y = sess.run(None, {sess.get_inputs()[0].name: x})[0]
    return y[0, :, :h, :w].transpose(1, 2, 0)


def model_outputs(
    model: Path, pairs: list[ValPair], seed: int = 7, photos: str = ""
) -> list[np.ndarray]:
    stamp = f"{model.stem}-{model.stat().st_mtime_ns}" + ("" if seed == 7 else f"-seed{seed}")
    stamp += f"-{photos}" if photos else ""
    cache = ROOT / "training/overlay/runs" / f"cache-{stamp}.npz"
    if cache.exists():
        return [o.astype(np.float32) for o in np.load(cache, allow_pickle=True)["outs"]]
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    outs = [run_onnx(sess, p.observed).astype(np.float16) for p in pairs]
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, outs=np.array(outs, dtype=object))
    return [o.astype(np.float32) for o in outs]


def parse(spec: str) -> unmix.Settings:
    """``k=v,...`` -> Settings, each value read as the type of that field's default."""
    defaults = unmix.Settings()
    kw: dict[str, object] = {}
    for part in filter(None, spec.split(",")):
        key, value = part.split("=")
        default = getattr(defaults, key)
        kw[key] = (
            value == "1"
            if isinstance(default, bool)
            else type(default)(value)
            if isinstance(default, (int, float, str))
            else value
        )
    return unmix.Settings(**kw)  # type: ignore[arg-type]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", type=Path, default=None, help="ONNX model with a coverage output")
    ap.add_argument("--oracle", action="store_true", help="use the generator's true coverage")
    ap.add_argument("--data", type=Path, default=Path("/work/shared/data/sr-train"))
    ap.add_argument("--set", action="append", default=[], help="Settings overrides, k=v,...")
    ap.add_argument("--per-pair", action="store_true")
    ap.add_argument("--seed", type=int, default=7, help="overlay draw (7: the validation pairs)")
    ap.add_argument("--inpaint", type=Path, default=None, help="inpainting network (ONNX)")
    ap.add_argument(
        "--photos",
        type=Path,
        default=None,
        help="a folder of photos to use instead of the held-out split (e.g. the scikit-image "
        "PNGs bench/bench_text_removal.py --photos skimage writes to the temp folder)",
    )
    ap.add_argument(
        "--fonts",
        choices=FONT_POOLS,
        default="base",
        help="the generator's font pool (held-out: families never used in training)",
    )
    args = ap.parse_args()
    use_fonts(args.fonts)
    fill = None
    if args.inpaint:
        from pixelmill.engines.runtime.onnx import OnnxModel
        from pixelmill.engines.text_removal.inpaint import Inpainter

        fill = Inpainter(OnnxModel(args.inpaint)).fill
    if args.photos:
        val_paths = sorted(args.photos.glob("*.png"))
    else:
        _, val_paths = split(args.data)
    pairs = validation_pairs(val_paths, seed=args.seed)
    tag = args.photos.name if args.photos else ""
    tag += "" if args.fonts == "base" else f"-fonts-{args.fonts}"
    outs = model_outputs(args.model, pairs, args.seed, tag) if args.model else None
    print(f"{'setting':34s}" + "".join(f"{k:>10s}" for k in KINDS) + "  overall  <input")
    row = f"{'input':34s}"
    for kind in KINDS:
        row += f"{np.mean([psnr(p.observed, p.clean) for p in pairs if p.kind == kind]):10.2f}"
    print(row, flush=True)
    for spec in args.set or [""]:
        st = parse(spec)
        res: dict[str, list[float]] = {k: [] for k in KINDS}
        below = dict.fromkeys(KINDS, 0)
        t0 = time.time()
        for i, p in enumerate(pairs):
            if args.oracle:
                got = unmix.restore(p.observed, p.cover, settings=st, inpaint=fill)
            else:
                assert outs is not None
                o = outs[i]
                kch = 7 if o.shape[2] > 7 else 0
                got = unmix.restore(p.observed, o[..., kch], o[..., 0], st, inpaint=fill)
            v = psnr(got.image, p.clean)
            inp = psnr(p.observed, p.clean)
            res[p.kind].append(v)
            below[p.kind] += v < inp
            if args.per_pair:
                print(f"  {p.kind:9s} {p.name:45s} in {inp:6.2f} out {v:6.2f} {got.image_fit}")
        ov = np.mean([v for k in KINDS if k != "clean" for v in res[k]])
        print(
            f"{(spec or 'defaults')[:34]:34s}"
            + "".join(f"{np.mean(res[k]):10.2f}" for k in KINDS)
            + f"{ov:9.2f}  "
            + "/".join(str(below[k]) for k in KINDS)
            + f"  {time.time() - t0:.0f}s",
            flush=True,
        )


if __name__ == "__main__":
    main()
