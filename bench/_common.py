"""Shared helpers for the hand-run benchmarks in ``bench/``: timing, throughput and PSNR.

Benchmarks are plain scripts (``.venv/bin/python bench/bench_upscale.py``); the script's folder is
on ``sys.path``, so they import this module as ``from _common import time_call, ...``.

The API is deliberately small:

- :func:`time_call` - median wall time of a call, after warm-up runs.
- :func:`ms_per_mp` - milliseconds per megapixel, the unit ``docs/models.md`` reports.
- :func:`psnr` / :func:`psnr_y` - PSNR on all channels / on BT.601 luma with a border shave
  (the usual super-resolution convention).
- :func:`resize_to_area` - resize a test photo to about N megapixels.
- :func:`print_table` - print rows of dicts as an aligned Markdown table.
- :func:`print_targets` - print a list of quality or speed targets, each judged met or not.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt


def time_call(fn: Callable[[], object], repeat: int = 3, warmup: int = 1) -> float:
    """Run ``fn`` ``warmup`` times untimed (model loading, caches), then ``repeat`` times, and
    return the median wall time in seconds. The median resists the noise of a shared machine."""
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    for _ in range(warmup):
        fn()
    times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def ms_per_mp(seconds: float, h: int, w: int) -> float:
    """Milliseconds per megapixel for a call that took ``seconds`` on an ``h`` x ``w`` image."""
    return seconds * 1000.0 / (h * w / 1e6)


def psnr(a: npt.NDArray[Any], b: npt.NDArray[Any], peak: float = 255.0) -> float:
    """PSNR in dB between two same-shaped images over all channels (``inf`` when identical)."""
    if a.shape != b.shape:
        raise ValueError(f"shape mismatch: {a.shape} vs {b.shape}")
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    if mse == 0.0:
        return float("inf")
    return float(10.0 * np.log10(peak * peak / mse))


def rgb_to_y(rgb: npt.NDArray[np.uint8]) -> npt.NDArray[np.float64]:
    """BT.601 studio-range luma (16..235) of an RGB uint8 image, as used in SR papers."""
    x = rgb[..., :3].astype(np.float64)
    y: npt.NDArray[np.float64] = (
        16.0 + (65.481 * x[..., 0] + 128.553 * x[..., 1] + 24.966 * x[..., 2]) / 255.0
    )
    return y


def psnr_y(a: npt.NDArray[np.uint8], b: npt.NDArray[np.uint8], shave: int = 0) -> float:
    """PSNR on the luma channel, ignoring ``shave`` pixels at each border (the SR convention:
    shave = scale, because resamplers disagree most at the edges)."""
    if a.shape != b.shape:
        raise ValueError(f"shape mismatch: {a.shape} vs {b.shape}")
    ya, yb = rgb_to_y(a), rgb_to_y(b)
    if shave > 0:
        ya = ya[shave:-shave, shave:-shave]
        yb = yb[shave:-shave, shave:-shave]
    return psnr(ya, yb)


def resize_to_area(img: npt.NDArray[np.uint8], megapixels: float) -> npt.NDArray[np.uint8]:
    """Resize ``img`` (keeping its aspect ratio) to about ``megapixels`` MP."""
    h, w = img.shape[:2]
    f = (megapixels * 1e6 / (h * w)) ** 0.5
    size = (max(1, round(w * f)), max(1, round(h * f)))
    interp = cv2.INTER_AREA if f < 1 else cv2.INTER_CUBIC
    return np.asarray(cv2.resize(img, size, interpolation=interp), dtype=np.uint8)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4f}" if abs(value) < 10 else f"{value:.2f}"
    return str(value)


def print_table(rows: Sequence[dict[str, object]], title: str | None = None) -> None:
    """Print ``rows`` (dicts sharing keys; the first row's keys are the columns) as a Markdown
    table, floats rounded for reading."""
    if title:
        print(f"\n### {title}\n")
    if not rows:
        print("(no rows)")
        return
    cols = list(rows[0].keys())
    cells = [[_fmt(r.get(c, "")) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    print("| " + " | ".join(c.ljust(wd) for c, wd in zip(cols, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (wd + 2) for wd in widths) + "|")
    for row in cells:
        print("| " + " | ".join(v.ljust(wd) for v, wd in zip(row, widths, strict=True)) + " |")


Target = tuple[str, bool | None, str]
"""One target as a benchmark judges it: what is asked, whether this run met it (None: measured
and reported, not judged here), and the figure measured."""


def print_targets(title: str, targets: Sequence[Target]) -> None:
    """Print ``targets`` under ``title``, one line each: ``what: met (figure)`` or ``NOT met``."""
    print(f"\nTargets ({title}):")
    for what, ok, got in targets:
        verdict = "reported" if ok is None else "met" if ok else "NOT met"
        print(f"  {what}: {verdict} ({got})")
    print()
