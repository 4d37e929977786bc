"""Benchmark the text-removal engine: speed (ms per megapixel) and quality on real photos with
text rendered in four styles (white, black, white with black outline, 55 % white watermark):
PSNR against the clean photo in the text region, and how many characters OCR still reads.

Run: ``.venv/bin/python bench/bench_text_removal.py``
"""

from __future__ import annotations

from functools import partial

import cv2
import numpy as np
from skimage import data

from _common import ms_per_mp, print_table, psnr, resize_to_area, time_call
from pixelmill.engines.base import EngineInputs, ImageArray
from pixelmill.engines.runtime.ocr import read_text
from pixelmill.engines.text_removal.engine import TextRemovalEngine, TextRemovalParams

STYLES = ("white", "black", "outline", "watermark")


def photo(name: str) -> ImageArray:
    return np.ascontiguousarray(getattr(data, name)(), dtype=np.uint8)


def render(clean: ImageArray, style: str) -> ImageArray:
    """``clean`` with two lines of text in ``style``; sizes follow the image width."""
    img = clean.copy()
    h, w = img.shape[:2]
    k = w / 512
    font = cv2.FONT_HERSHEY_SIMPLEX
    for text, org, size, thick in (
        ("SAMPLE TEXT", (int(w * 0.06), int(h * 0.3)), 1.4 * k, max(1, round(3 * k))),
        ("pixelmill.io 2026", (int(w * 0.1), int(h * 0.75)), 1.0 * k, max(1, round(2 * k))),
    ):
        if style == "watermark":
            overlay = img.copy()
            cv2.putText(overlay, text, org, font, size, (255, 255, 255), thick, cv2.LINE_AA)
            img = np.asarray(cv2.addWeighted(img, 0.45, overlay, 0.55, 0), dtype=np.uint8)
            continue
        if style == "outline":
            cv2.putText(img, text, org, font, size, (0, 0, 0), thick + 4, cv2.LINE_AA)
        colour = (10, 10, 10) if style == "black" else (255, 255, 255)
        cv2.putText(img, text, org, font, size, colour, thick, cv2.LINE_AA)
    return img


def characters(img: ImageArray) -> int:
    return sum(len(line.text.replace(" ", "")) for line in read_text(img))


def quality_rows() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    engine = TextRemovalEngine()
    for name in ("astronaut", "coffee", "chelsea"):
        clean = photo(name)
        for style in STYLES:
            dirty = render(clean, style)
            region = (
                cv2.dilate(np.any(dirty != clean, axis=2).astype(np.uint8), np.ones((7, 7))) > 0
            )
            row: dict[str, object] = {
                "image": name,
                "style": style,
                "chars before": characters(dirty),
                "PSNR before": psnr(dirty[region], clean[region]),
            }
            for mask in ("strokes", "boxes"):
                result = engine.run(EngineInputs(dirty), TextRemovalParams(mask=mask))
                out = result.images[0].pixels
                row[f"{mask}: PSNR"] = psnr(out[region], clean[region])
                row[f"{mask}: chars after"] = characters(out)
                row[f"{mask}: mask %"] = 100 * float(result.details["mask_coverage"])
            rows.append(row)
    return rows


def speed_rows() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    engine = TextRemovalEngine()
    engine.load()
    for mp in (1.0, 0.25):
        clean = resize_to_area(photo("coffee"), mp)
        for label, img, params in (
            ("text (strokes)", render(clean, "white"), TextRemovalParams()),
            ("text (boxes)", render(clean, "white"), TextRemovalParams(mask="boxes")),
            ("no text", resize_to_area(photo("astronaut"), mp), TextRemovalParams()),
        ):
            h, w = img.shape[:2]
            seconds = time_call(partial(engine.run, EngineInputs(img), params), repeat=3, warmup=1)
            rows.append(
                {
                    "case": label,
                    "size": f"{w}x{h}",
                    "ms": seconds * 1000,
                    "ms/MP": ms_per_mp(seconds, h, w),
                }
            )
    return rows


def main() -> None:
    print_table(speed_rows(), "Text removal: speed (median of 3 after 1 warm-up)")
    rows = quality_rows()
    print_table(rows, "Text removal quality (PSNR in dB in the text region vs the clean photo)")
    for mask in ("strokes", "boxes"):
        values = [float(str(r[f"{mask}: PSNR"])) for r in rows]
        left = sum(int(str(r[f"{mask}: chars after"])) for r in rows)
        before = sum(int(str(r["chars before"])) for r in rows)
        print(
            f"{mask}: mean PSNR {np.mean(values):.2f} dB (min {np.min(values):.2f}); "
            f"characters read: {before} before, {left} after"
        )


if __name__ == "__main__":
    main()
