"""Benchmark the upscale engine: speed per quality level and PSNR-Y against the original of
downscaled photos (astronaut, coffee, chelsea; ×2 and ×4), compared with plain bicubic.

Two downscalers make the low-resolution inputs, because the answer depends on them: OpenCV
area averaging (what iterative back-projection assumes) and PIL bicubic with antialiasing
(a common resizer, and the degradation ``training/sr`` trains on).
If ``pixelmill.engines.upscale.learned`` is importable, its model is measured too.

Run: ``.venv/bin/python bench/bench_upscale.py``
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import partial

import cv2
import numpy as np
from PIL import Image
from skimage import data

from _common import ms_per_mp, print_table, psnr_y, resize_to_area, time_call
from pixelmill.engines.base import EngineInputs, ImageArray
from pixelmill.engines.upscale.engine import METHODS, UpscaleEngine, UpscaleParams, upscale_image

Upscaler = Callable[[ImageArray, int], ImageArray]


def photo(name: str) -> ImageArray:
    return np.ascontiguousarray(getattr(data, name)(), dtype=np.uint8)


def down_area(hr: ImageArray, s: int) -> ImageArray:
    h, w = hr.shape[:2]
    return np.asarray(
        cv2.resize(hr, (w // s, h // s), interpolation=cv2.INTER_AREA), dtype=np.uint8
    )


def down_pil_bicubic(hr: ImageArray, s: int) -> ImageArray:
    h, w = hr.shape[:2]
    return np.asarray(Image.fromarray(hr).resize((w // s, h // s), Image.Resampling.BICUBIC))


def bicubic(lr: ImageArray, s: int) -> ImageArray:
    h, w = lr.shape[:2]
    return np.asarray(cv2.resize(lr, (w * s, h * s), interpolation=cv2.INTER_CUBIC), dtype=np.uint8)


def upscalers() -> dict[str, Upscaler]:
    out: dict[str, Upscaler] = {"bicubic": bicubic}
    for quality, method in METHODS.items():
        out[quality] = partial(upscale_image, method=method)
    try:
        # Looked up dynamically: the learned model is optional and owned by another module.
        learned = importlib.import_module("pixelmill.engines.upscale.learned")
    except ImportError:
        print("(pixelmill.engines.upscale.learned not importable: learned model not measured)")
    else:
        out["learned"] = learned.upscale_learned
    return out


def psnr_rows() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    ups = upscalers()
    for scale in (2, 4):
        for down_name, down in (("area", down_area), ("PIL bicubic", down_pil_bicubic)):
            for name in ("astronaut", "coffee", "chelsea"):
                hr = photo(name)
                h, w = (hr.shape[0] // 8) * 8, (hr.shape[1] // 8) * 8
                hr = np.ascontiguousarray(hr[:h, :w])
                lr = down(hr, scale)
                row: dict[str, object] = {
                    "scale": f"x{scale}",
                    "downscale": down_name,
                    "image": name,
                }
                for label, up in ups.items():
                    row[label] = psnr_y(up(lr, scale), hr, shave=scale)
                rows.append(row)
    return rows


def speed_rows() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    engine = UpscaleEngine()
    for mp, scale in ((0.25, 2), (1.0, 2), (0.25, 4)):
        img = resize_to_area(photo("coffee"), mp)
        h, w = img.shape[:2]
        for quality in ("fast", "balanced", "high"):
            params = UpscaleParams(scale=scale, quality=quality)
            seconds = time_call(partial(engine.run, EngineInputs(img), params), repeat=3, warmup=1)
            rows.append(
                {
                    "quality": quality,
                    "scale": f"x{scale}",
                    "input": f"{w}x{h}",
                    "ms": seconds * 1000,
                    "ms/input MP": ms_per_mp(seconds, h, w),
                    "ms/output MP": ms_per_mp(seconds, h * scale, w * scale),
                }
            )
    return rows


def main() -> None:
    print_table(speed_rows(), "Upscale: speed (median of 3 after 1 warm-up)")
    rows = psnr_rows()
    print_table(rows, "PSNR-Y (dB) against the original, border shaved by the scale")
    labels = [k for k in rows[0] if k not in ("scale", "downscale", "image", "bicubic")]
    summary: list[dict[str, object]] = []
    for scale in ("x2", "x4"):
        for down_name in ("area", "PIL bicubic"):
            subset = [r for r in rows if r["scale"] == scale and r["downscale"] == down_name]
            entry: dict[str, object] = {"scale": scale, "downscale": down_name}
            for label in labels:
                gains = [float(str(r[label])) - float(str(r["bicubic"])) for r in subset]
                entry[f"{label} vs bicubic"] = float(np.mean(gains))
            summary.append(entry)
    print_table(summary, "Mean PSNR-Y gain over bicubic (dB)")


if __name__ == "__main__":
    main()
