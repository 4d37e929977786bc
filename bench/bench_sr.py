"""Benchmark pixelmill-sr (our learned super-resolution) against bicubic and its earlier weights.

Run: ``.venv/bin/python bench/bench_sr.py [--data /work/shared/data/sr-train] [--quick]``

Quality (PSNR-Y, BT.601 studio range, ``scale`` pixels shaved at each border), per degradation
and scale, on:

- the 10 validation images held out from training (the seeded split in ``training/sr/data.py``:
  3 CBSD68, 4 CSun_Hays80, 3 CUrban100), skipped when the data folder is absent;
- real photos never trained on, from scikit-image: astronaut, coffee, chelsea, rocket (colour),
  camera, coins, clock (grey, used as R = G = B).

Protocol: HR cropped to a multiple of the scale; LR = ``data.degrade(HR, scale, d)`` for each
degradation ``d`` in ``data.EVAL_DEGRADATIONS`` (PIL bicubic with antialiasing, OpenCV cubic and
linear without, area, PIL bilinear, PIL and OpenCV nearest, blur before / noise or JPEG after a
bicubic downscale), the uint8 RGB a user would upload; bicubic baseline = PIL bicubic upscale of
that LR image. Columns: the previous weights (commit ``OLD_COMMIT``, trained on clean bicubic
only, read from git), ``balanced`` and ``high`` (``upscale_learned(LR, scale, quality)``), all
through the same tiled pipeline; all outputs are uint8 RGB scored the same way
(``_common.psnr_y``).

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
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from PIL import Image
from skimage import data as skdata

from _common import Target, print_table, print_targets, psnr_y, resize_to_area
from pixelmill.engines.runtime.onnx import OnnxModel
from pixelmill.engines.upscale.learned import (
    load,
    model_file,
    model_info,
    network_meta,
    run_network,
    upscale_learned,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "training" / "sr"))
# The degradations and the seeded split (training/sr/data.py needs only numpy, PIL and cv2).
sr_data: Any = importlib.import_module("data")

PHOTOS_COLOUR = ("astronaut", "coffee", "chelsea", "rocket")
PHOTOS_GREY = ("camera", "coins", "clock")
U8 = npt.NDArray[np.uint8]
# The weights before mixed-degradation training (clean bicubic only), for the "old" column.
OLD_COMMIT = "87f613253fc34bb2a9894e27dab5820f3c7caf22"
MODELS_DIR = "src/pixelmill/engines/upscale/models"


def photo(name: str) -> U8:
    """A scikit-image sample photo (bundled with the package, no download)."""
    return np.asarray(getattr(skdata, name)(), dtype=np.uint8)


def crop_to_multiple(img: U8, m: int) -> U8:
    h, w = img.shape[:2]
    return img[: h - h % m, : w - w % m]


def pil_resize(img: U8, w: int, h: int) -> U8:
    out = Image.fromarray(img).resize((w, h), Image.Resampling.BICUBIC)
    return np.asarray(out, dtype=np.uint8)


def old_models(tmp: Path) -> dict[int, tuple[OnnxModel, dict[str, str]]]:
    """The earlier ×2/×4 exports from git (empty when git or the commit is unavailable)."""
    out: dict[int, tuple[OnnxModel, dict[str, str]]] = {}
    for scale in (2, 4):
        name = f"pixelmill-sr-x{scale}.onnx"
        try:
            blob = subprocess.run(
                ["git", "-C", str(ROOT), "show", f"{OLD_COMMIT}:{MODELS_DIR}/{name}"],
                check=True,
                capture_output=True,
            ).stdout
        except (OSError, subprocess.CalledProcessError):
            print(f"(git show {OLD_COMMIT[:8]}:{name} failed: no 'old' column)")
            return {}
        path = tmp / name
        path.write_bytes(blob)
        model = OnnxModel(path)
        out[scale] = (model, network_meta(model))
    return out


def load_rgb(path: Path) -> U8:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), dtype=np.uint8)


def image_sets(data_root: Path) -> dict[str, list[tuple[str, U8]]]:
    sets: dict[str, list[tuple[str, U8]]] = {}
    if data_root.is_dir():
        _, val = sr_data.split(data_root, seed=0)
        sets["held-out"] = [(f"{f.parent.name}/{f.name}", load_rgb(f)) for f in val]
    else:
        print(f"(no {data_root}: skipping the held-out validation images)")
    photos: list[tuple[str, U8]] = []
    for name in PHOTOS_COLOUR:
        photos.append((name, photo(name)))
    for name in PHOTOS_GREY:
        g = photo(name)
        photos.append((name, np.repeat(g[..., None], 3, axis=2)))
    sets["skimage"] = photos
    return sets


def quality(
    sets: dict[str, list[tuple[str, U8]]],
    scales: tuple[int, ...],
    degradations: list[str],
    old: dict[int, tuple[OnnxModel, dict[str, str]]],
) -> None:
    methods: dict[str, Callable[[U8, int], U8]] = {
        "balanced": lambda lr, s: upscale_learned(lr, s, "balanced"),  # type: ignore[arg-type]
        "high": lambda lr, s: upscale_learned(lr, s, "high"),  # type: ignore[arg-type]
    }
    if old:
        methods = {"old": lambda lr, s: run_network(lr, *old[s]), **methods}
    worst: dict[tuple[int, str], tuple[float, str, str]] = {}
    for set_name, images in sets.items():
        rows: list[dict[str, object]] = []
        means: dict[tuple[int, str, str], float] = {}
        for scale in scales:
            for deg_name in degradations:
                d = sr_data.EVAL_DEGRADATIONS[deg_name]
                bic_l: list[float] = []
                gains: dict[str, list[float]] = {m: [] for m in methods}
                for img_name, img in images:
                    hr = crop_to_multiple(img, scale)
                    h, w = hr.shape[:2]
                    lr = sr_data.degrade(hr, scale, d)
                    bic = psnr_y(pil_resize(lr, w, h), hr, shave=scale)
                    bic_l.append(bic)
                    for m, fn in methods.items():
                        g = psnr_y(fn(lr, scale), hr, shave=scale) - bic
                        gains[m].append(g)
                        key = (scale, m)
                        if m != "old" and (key not in worst or g < worst[key][0]):
                            worst[key] = (g, img_name, deg_name)
                row: dict[str, object] = {
                    "scale": f"x{scale}",
                    "degradation": deg_name,
                    "bicubic dB": statistics.fmean(bic_l),
                }
                for m in methods:
                    row[f"{m} gain"] = statistics.fmean(gains[m])
                    means[(scale, deg_name, m)] = statistics.fmean(gains[m])
                row["balanced worst img"] = min(gains["balanced"])
                row["high worst img"] = min(gains["high"])
                row["high - balanced"] = statistics.fmean(gains["high"]) - statistics.fmean(
                    gains["balanced"]
                )
                rows.append(row)
        print_table(
            rows,
            f"PSNR-Y on {set_name} ({len(images)} images): mean bicubic dB, mean gain over "
            "bicubic in dB (old = previous weights), worst single image",
        )
        print_targets(f"issue #19 item 2, {set_name}", targets(means))
        print_targets(f"issue #44 item 1, {set_name}", targets_44(means))
    for (scale, m), (g, img_name, deg_name) in sorted(worst.items()):
        print(f"x{scale} {m}: worst image gain {g:+.2f} dB ({img_name}, {deg_name})")


def targets(means: dict[tuple[int, str, str], float]) -> list[Target]:
    """Issue #19 item 2's quality targets, judged from the table just printed (means over the
    set's images): never below bicubic under any degradation, at x2 and x4; clean x2 at least
    +2.0 dB; ``high`` at least +0.3 dB over ``balanced`` at x2 (on clean input and on the mean
    over the degradations)."""
    clean = "bicubic (PIL, antialiased)"
    out: list[Target] = []
    for scale in sorted({k[0] for k in means}):
        for m in ("balanced", "high"):
            got = {d: g for (s, d, q), g in means.items() if s == scale and q == m}
            if not got:
                continue
            low = min(got, key=lambda d: got[d])
            out.append(
                (
                    f"x{scale} {m} never below bicubic",
                    got[low] >= 0,
                    f"lowest {got[low]:+.2f} dB, {low}",
                )
            )
    if (2, clean, "balanced") in means:
        b, h = means[(2, clean, "balanced")], means[(2, clean, "high")]
        out.append(("x2 balanced clean >= +2.0 dB", b >= 2.0, f"{b:+.2f}"))
        out.append(("x2 high clean >= +2.0 dB", h >= 2.0, f"{h:+.2f}"))
        diffs = [
            means[(2, d, "high")] - g
            for (s, d, q), g in means.items()
            if s == 2 and q == "balanced"
        ]
        avg = statistics.fmean(diffs)
        out.append(("x2 high - balanced >= +0.3 dB, clean", h - b >= 0.3, f"{h - b:+.2f}"))
        out.append(
            (
                f"x2 high - balanced >= +0.3 dB, mean over {len(diffs)} degradations",
                avg >= 0.3,
                f"{avg:+.2f}",
            )
        )
    return out


def targets_44(means: dict[tuple[int, str, str], float]) -> list[Target]:
    """Issue #44 item 1's targets, from the same means: on clean (antialiased bicubic) input
    ``balanced`` not more than 0.1 dB below the earlier clean-only network (the ``old`` column),
    every degraded kind at or above bicubic, and ``high`` at least +0.3 dB over ``balanced`` on
    clean input, at x2 and at x4."""
    clean = "bicubic (PIL, antialiased)"
    out: list[Target] = []
    for scale in sorted({k[0] for k in means}):
        b = means.get((scale, clean, "balanced"))
        if b is None:
            continue
        old = means.get((scale, clean, "old"))
        if old is not None:
            out.append(
                (
                    f"x{scale} balanced clean >= old clean network - 0.1 dB",
                    b >= old - 0.1,
                    f"{b:+.2f} vs {old:+.2f} ({b - old:+.2f})",
                )
            )
        degraded = {d: g for (s, d, q), g in means.items() if s == scale and q == "balanced"}
        degraded.pop(clean, None)
        if degraded:
            low = min(degraded, key=lambda d: degraded[d])
            out.append(
                (
                    f"x{scale} balanced: every degraded kind >= bicubic",
                    degraded[low] >= 0,
                    f"lowest {degraded[low]:+.2f} dB, {low}",
                )
            )
        h = means[(scale, clean, "high")]
        out.append((f"x{scale} high - balanced >= +0.3 dB, clean", h - b >= 0.3, f"{h - b:+.2f}"))
    return out


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
    for quality_level in ("balanced", "high"):
        for scale in (2, 4, 8):
            img = src if scale != 8 else resize_to_area(src, 0.25)
            ih, iw = img.shape[:2]
            imp = ih * iw / 1e6
            med, best, cpu = timings(
                lambda img=img, s=scale, q=quality_level: upscale_learned(img, s, q),  # type: ignore[misc]
                repeat,
            )
            info: dict[str, Any] = model_info(scale, quality_level)
            rows.append(
                {
                    "quality": quality_level,
                    "scale": f"x{scale}",
                    "input": f"{iw}x{ih}",
                    "model": info["name"],
                    "ms/input MP (median)": med * 1000 / imp,
                    "ms/input MP (min)": best * 1000 / imp,
                    "CPU ms/input MP (median, all threads)": cpu * 1000 / imp,
                    "ms/output MP (median)": med * 1000 / (imp * scale * scale),
                }
            )
    # The context networks as exported (the statistics a second input, the gains multiplied
    # between the convolutions) against the folded graphs the engine runs (``folded.py``).
    for quality_level in ("balanced", "high"):
        info = model_info(2, quality_level)
        if not info["gains_folded"]:
            continue
        exported = OnnxModel(model_file(2, quality_level))
        meta = network_meta(exported)
        mirror = bool(info["mirror_ensemble"])
        med, best, cpu = timings(
            lambda m=exported, meta=meta, mirror=mirror: run_network(src, m, meta, mirror),  # type: ignore[misc]
            repeat,
        )
        rows.append(
            {
                "quality": quality_level,
                "scale": "x2",
                "input": f"{w}x{h}",
                "model": f"{info['name']} as exported (gains not folded)",
                "ms/input MP (median)": med * 1000 / mp,
                "ms/input MP (min)": best * 1000 / mp,
                "CPU ms/input MP (median, all threads)": cpu * 1000 / mp,
                "ms/output MP (median)": med * 1000 / (mp * 4),
            }
        )
    print_table(rows, f"Speed, onnxruntime 2 intra-op threads, {repeat} runs after 1 warm-up")
    print(f"(input for x2/x4: coffee resized to {w}x{h} = {mp:.2f} MP; x8: 0.25 MP. CPU time")
    print(" counts both onnxruntime threads: on an idle machine wall ~ CPU / 2 at best.)")
    for q in ("balanced", "high"):
        for s in (2, 4):
            print(f"{q} x{s}: {model_info(s, q)}")


def _rss_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _peak_growth(megapixels: float, scale: int) -> tuple[str, float, float]:
    """In a fresh process: (input size, peak RSS growth in MiB over the loaded models, output
    MiB) for one ``upscale_learned`` call on coffee resized to ``megapixels``. The peak is
    reset after loading (Linux ``clear_refs`` 5), since building the sessions peaks higher than
    a call does."""
    img = resize_to_area(photo("coffee"), megapixels)
    load()
    Path("/proc/self/clear_refs").write_text("5")
    before = _rss_kib("VmRSS")
    out = upscale_learned(img, scale)  # type: ignore[arg-type]
    peak = _rss_kib("VmHWM")
    return f"{img.shape[1]}x{img.shape[0]}", (peak - before) / 1024, out.nbytes / 2**20


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


def _busiest(img: U8, side: int) -> tuple[int, int]:
    """Top-left corner of the ``side``-px window (on a coarse grid) with the most gradient."""
    y = img[..., 1].astype(np.float32)
    energy = np.abs(np.diff(y, axis=0))[:, :-1] + np.abs(np.diff(y, axis=1))[:-1]
    best, corner = -1.0, (0, 0)
    for r in range(0, energy.shape[0] - side, side // 4):
        for c in range(0, energy.shape[1] - side, side // 4):
            e = float(energy[r : r + side, c : c + side].mean())
            if e > best:
                best, corner = e, (r, c)
    return corner


def contact_sheet(
    path: Path,
    old: dict[int, tuple[OnnxModel, dict[str, str]]],
    scale: int = 2,
    degradation: str = "bicubic (cv2, no antialias)",
) -> None:
    """A JPEG of crops at ``scale`` from input downscaled by ``degradation`` (default: x2 from
    non-antialiased input, ``cv2.INTER_CUBIC``): the input (pixel-repeated), bicubic, the
    previous weights, balanced, high and the original, each crop shown at 2x zoom (nearest) so
    the pixels can be compared by eye."""
    import cv2

    # Only the bundled scikit-image photos: the shared research images are measured, not
    # shipped (not even as crops).
    crops: list[tuple[str, U8, tuple[int, int]]] = []
    coffee = photo("coffee")
    crops.append(("coffee", coffee, _busiest(coffee, 128)))
    crops.append(("astronaut", photo("astronaut"), (40, 160)))
    crops.append(("chelsea", photo("chelsea"), (60, 160)))
    side, zoom = 128, 2
    d = sr_data.EVAL_DEGRADATIONS[degradation]
    short = {"bicubic (cv2, no antialias)": "cv2 cubic, no AA"}.get(degradation, "PIL bicubic AA")
    labels = [f"input x{scale} ({short})", "bicubic", "old weights", "balanced", "high", "original"]
    rows: list[U8] = []
    for title, img, (y, x) in crops:
        hr = crop_to_multiple(img, scale)
        h, w = hr.shape[:2]
        lr = sr_data.degrade(hr, scale, d)
        outs = [
            np.repeat(np.repeat(lr, scale, axis=0), scale, axis=1),
            pil_resize(lr, w, h),
            run_network(lr, *old[scale]) if old else pil_resize(lr, w, h),
            upscale_learned(lr, scale, "balanced"),  # type: ignore[arg-type]
            upscale_learned(lr, scale, "high"),  # type: ignore[arg-type]
            hr,
        ]
        tiles = []
        for label, out in zip(labels, outs, strict=True):
            c = out[y : y + side, x : x + side]
            c = np.repeat(np.repeat(c, zoom, axis=0), zoom, axis=1)
            c = np.ascontiguousarray(np.pad(c, ((22, 4), (4, 4), (0, 0)), constant_values=255))
            score = "" if label in ("original", labels[0]) else f" {psnr_y(out, hr, scale):.2f}dB"
            cv2.putText(c, label + score, (4, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 1)
            tiles.append(c)
        row = np.concatenate(tiles, axis=1)
        head = np.full((20, row.shape[1], 3), 255, np.uint8)
        cv2.putText(
            head,
            title + " (PSNR-Y of the whole image)",
            (4, 15),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.45,
            (0, 0, 0),
            1,
        )
        rows.append(np.concatenate([head, row], axis=0))
    sheet = np.concatenate(rows, axis=0)
    Image.fromarray(sheet).save(path, quality=90 if scale == 2 else 82)
    print(f"wrote {path} ({sheet.shape[1]}x{sheet.shape[0]})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "sr-train")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="3 degradations, 3 timing runs, no memory")
    ap.add_argument("--scales", default="2,4", help="scales for the quality tables")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--sheet", type=Path, default=None, help="write the x2 contact sheet here")
    ap.add_argument(
        "--sheet-x4",
        type=Path,
        default=None,
        help="write the x4 contact sheet from clean (antialiased bicubic) input here",
    )
    ap.add_argument(
        "--sheet-clean",
        type=Path,
        default=None,
        help="write a x2 contact sheet from clean (antialiased bicubic) input here",
    )
    args = ap.parse_args()
    if args.sheet is not None or args.sheet_x4 is not None or args.sheet_clean is not None:
        with tempfile.TemporaryDirectory() as tmp:
            old = old_models(Path(tmp))
            if args.sheet is not None:
                contact_sheet(args.sheet, old)
            if args.sheet_x4 is not None:
                contact_sheet(args.sheet_x4, old, 4, "bicubic (PIL, antialiased)")
            if args.sheet_clean is not None:
                contact_sheet(args.sheet_clean, old, 2, "bicubic (PIL, antialiased)")
        return
    scales = tuple(int(s) for s in args.scales.split(","))
    degradations = list(sr_data.EVAL_DEGRADATIONS)
    if args.quick:
        degradations = [*degradations[:2], "nearest (cv2)"]
    if not args.no_quality:
        with tempfile.TemporaryDirectory() as tmp:
            quality(image_sets(args.data), scales, degradations, old_models(Path(tmp)))
    if not args.no_speed:
        speed(3 if args.quick else args.repeat)
    if not args.no_memory and not args.quick:
        memory()


if __name__ == "__main__":
    main()
