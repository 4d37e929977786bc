"""Benchmark pixelmill-sr (our learned super-resolution) against bicubic.

Run: ``.venv/bin/python bench/bench_sr.py [--data /work/shared/data/sr-train] [--quick]``

Quality (PSNR-Y, BT.601 studio range, ``scale`` pixels shaved at each border):

- the 10 validation images held out from training (the seeded split in ``training/sr/data.py``:
  3 CBSD68, 4 CSun_Hays80, 3 CUrban100), skipped when the data folder is absent;
- real photos never trained on, from scikit-image: astronaut, coffee, chelsea, rocket (colour),
  camera, coins, clock (grey, used as R = G = B).

Protocol: HR cropped to a multiple of the scale; LR = PIL bicubic downscale of the uint8 RGB
image (antialiased, the degradation used in training); bicubic baseline = PIL bicubic upscale of
that LR image; ours = ``upscale_learned(LR, scale)``. Both outputs are uint8 RGB and scored the
same way (``_common.psnr_y``).

Speed: milliseconds per *input* megapixel of ``upscale_learned`` (the whole call: colour
conversion, tiles, onnxruntime with 2 intra-op threads, bicubic chroma) on a 1 MP input, median
and minimum of several runs (the machine is shared, so the minimum is the least disturbed run).

Memory: peak RSS growth of one call over the loaded models, each case in a fresh process, at
1 and 4 MP (x2), 1 MP (x4) and 0.25 MP (x8): tiles keep it to a constant plus the output.
"""

from __future__ import annotations

import argparse
import importlib
import multiprocessing
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from PIL import Image
from skimage import data as skdata

from _common import print_table, psnr_y, resize_to_area
from pixelmill.engines.upscale.learned import load, model_info, upscale_learned

ROOT = Path(__file__).resolve().parent.parent
PHOTOS_COLOUR = ("astronaut", "coffee", "chelsea", "rocket")
PHOTOS_GREY = ("camera", "coins", "clock")
U8 = npt.NDArray[np.uint8]


def photo(name: str) -> U8:
    """A scikit-image sample photo (bundled with the package, no download)."""
    return np.asarray(getattr(skdata, name)(), dtype=np.uint8)


def crop_to_multiple(img: U8, m: int) -> U8:
    h, w = img.shape[:2]
    return img[: h - h % m, : w - w % m]


def pil_resize(img: U8, w: int, h: int) -> U8:
    out = Image.fromarray(img).resize((w, h), Image.Resampling.BICUBIC)
    return np.asarray(out, dtype=np.uint8)


def score(hr_full: U8, scale: int) -> tuple[float, float]:
    """(bicubic, ours) PSNR-Y for one HR image at one scale."""
    hr = crop_to_multiple(hr_full, scale)
    h, w = hr.shape[:2]
    lr = pil_resize(hr, w // scale, h // scale)
    bic = pil_resize(lr, w, h)
    ours = upscale_learned(lr, scale)  # type: ignore[arg-type]
    return psnr_y(bic, hr, shave=scale), psnr_y(ours, hr, shave=scale)


def load_rgb(path: Path) -> U8:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), dtype=np.uint8)


def image_sets(data_root: Path) -> dict[str, list[tuple[str, U8]]]:
    sets: dict[str, list[tuple[str, U8]]] = {}
    if data_root.is_dir():
        sys.path.insert(0, str(ROOT / "training" / "sr"))
        # The training split (seeded; training/sr/data.py needs only numpy and PIL).
        split = importlib.import_module("data").split
        _, val = split(data_root, seed=0)
        for f in val:
            sets.setdefault(f"held-out {f.parent.name}", []).append((f.name, load_rgb(f)))
    else:
        print(f"(no {data_root}: skipping the held-out validation images)")
    photos: list[tuple[str, U8]] = []
    for name in PHOTOS_COLOUR:
        photos.append((name, photo(name)))
    for name in PHOTOS_GREY:
        g = photo(name)
        photos.append((name, np.repeat(g[..., None], 3, axis=2)))
    sets["skimage photos"] = photos
    return sets


def quality(sets: dict[str, list[tuple[str, U8]]], scales: tuple[int, ...]) -> None:
    per_image: list[dict[str, object]] = []
    summary: list[dict[str, object]] = []
    for scale in scales:
        all_gains: list[float] = []
        held_gains: list[float] = []
        for set_name, images in sets.items():
            bics: list[float] = []
            ours_l: list[float] = []
            for name, img in images:
                bic, ours = score(img, scale)
                bics.append(bic)
                ours_l.append(ours)
                per_image.append(
                    {
                        "scale": f"x{scale}",
                        "set": set_name,
                        "image": name,
                        "bicubic dB": bic,
                        "pixelmill-sr dB": ours,
                        "gain dB": ours - bic,
                    }
                )
            gains = [o - b for o, b in zip(ours_l, bics, strict=True)]
            all_gains += gains
            if set_name.startswith("held-out"):
                held_gains += gains
            summary.append(
                {
                    "scale": f"x{scale}",
                    "set": set_name,
                    "images": len(images),
                    "bicubic dB": statistics.fmean(bics),
                    "pixelmill-sr dB": statistics.fmean(ours_l),
                    "gain dB": statistics.fmean(gains),
                }
            )
        if held_gains:
            summary.append(
                {
                    "scale": f"x{scale}",
                    "set": "ALL held-out (mean gain)",
                    "images": len(held_gains),
                    "bicubic dB": "",
                    "pixelmill-sr dB": "",
                    "gain dB": statistics.fmean(held_gains),
                }
            )
        summary.append(
            {
                "scale": f"x{scale}",
                "set": "ALL unseen images (mean gain)",
                "images": len(all_gains),
                "bicubic dB": "",
                "pixelmill-sr dB": "",
                "gain dB": statistics.fmean(all_gains),
            }
        )
    print_table(per_image, "PSNR-Y per image (shave = scale)")
    print_table(summary, "PSNR-Y per set: mean over images")


def timings(fn: Callable[[], object], repeat: int) -> tuple[float, float, float]:
    """(median wall s, minimum wall s, median process CPU s) over ``repeat`` runs."""
    fn()
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), min(wall), statistics.median(cpu)


def speed(repeat: int) -> None:
    load()
    src = resize_to_area(photo("coffee"), 1.0)
    h, w = src.shape[:2]
    mp = h * w / 1e6
    rows: list[dict[str, object]] = []
    for scale in (2, 4, 8):
        img = src if scale != 8 else resize_to_area(src, 0.25)
        ih, iw = img.shape[:2]
        imp = ih * iw / 1e6
        med, best, cpu = timings(lambda img=img, s=scale: upscale_learned(img, s), repeat)  # type: ignore[misc]
        info: dict[str, Any] = model_info(scale)
        rows.append(
            {
                "scale": f"x{scale}",
                "input": f"{iw}x{ih}",
                "model": info["name"],
                "ms/input MP (median)": med * 1000 / imp,
                "ms/input MP (min)": best * 1000 / imp,
                "CPU ms/input MP (median, all threads)": cpu * 1000 / imp,
                "ms/output MP (median)": med * 1000 / (imp * scale * scale),
            }
        )
    print_table(rows, f"Speed, onnxruntime 2 intra-op threads, {repeat} runs after 1 warm-up")
    print(f"(input for x2/x4: coffee resized to {w}x{h} = {mp:.2f} MP; x8: 0.25 MP. CPU time")
    print(" counts both onnxruntime threads: on an idle machine wall ~ CPU / 2 at best.)")
    for s in (2, 4):
        print(f"x{s}: {model_info(s)}")


def _peak_growth(megapixels: float, scale: int) -> tuple[str, float, float]:
    """In a fresh process: (input size, peak RSS growth in MiB over the loaded models, output
    MiB) for one ``upscale_learned`` call on coffee resized to ``megapixels``."""
    img = resize_to_area(photo("coffee"), megapixels)
    load()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = upscale_learned(img, scale)  # type: ignore[arg-type]
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return f"{img.shape[1]}x{img.shape[0]}", (after - before) / 1024, out.nbytes / 2**20


def memory() -> None:
    """Peak memory per call, each case in its own process (peak RSS only ever grows)."""
    rows: list[dict[str, object]] = []
    ctx = multiprocessing.get_context("spawn")
    for mp, scale in ((1.0, 2), (4.0, 2), (1.0, 4), (0.25, 8)):
        with ctx.Pool(1) as pool:
            size, growth, out_mib = pool.apply(_peak_growth, (mp, scale))
        rows.append(
            {
                "scale": f"x{scale}",
                "input": size,
                "peak RSS growth MiB": growth,
                "output array MiB": out_mib,
            }
        )
    print_table(rows, "Memory: peak RSS growth of one call over the loaded models (Linux)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "sr-train")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="x2 and x4 only, 3 timing runs")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--no-memory", action="store_true")
    args = ap.parse_args()
    scales = (2, 4) if args.quick else (2, 4, 8)
    if not args.no_quality:
        quality(image_sets(args.data), scales)
    if not args.no_speed:
        speed(3 if args.quick else args.repeat)
    if not args.no_memory:
        memory()


if __name__ == "__main__":
    main()
