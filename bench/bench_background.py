"""Benchmark the background engines: speed (ms per megapixel) and mask quality (IoU against the
known shape of objects composited on plain, gradient and textured backgrounds).

Run: ``.venv/bin/python bench/bench_background.py``
"""

from __future__ import annotations

from functools import partial

import cv2
import numpy as np
import numpy.typing as npt
from pydantic import BaseModel
from skimage import data

from _common import ms_per_mp, print_table, resize_to_area, time_call
from pixelmill.engines.background.engine import (
    BackgroundRemovalEngine,
    BackgroundRemovalParams,
    MakeTransparentEngine,
    MakeTransparentParams,
)
from pixelmill.engines.base import Engine, EngineInputs, ImageArray
from pixelmill.engines.runtime.segmentation import coarse_mask, salient_mask

SIZE = 512


def photo(name: str) -> ImageArray:
    return np.ascontiguousarray(getattr(data, name)(), dtype=np.uint8)


def shapes(n: int) -> dict[str, npt.NDArray[np.uint8]]:
    """Two silhouettes (0..255, anti-aliased): a bottle and a five-pointed star."""
    bottle = np.zeros((n, n), np.uint8)
    cv2.ellipse(
        bottle,
        (n // 2, int(n * 0.6)),
        (int(n * 0.2), int(n * 0.25)),
        0,
        0,
        360,
        255,
        -1,
        cv2.LINE_AA,
    )
    cv2.rectangle(bottle, (int(n * 0.44), int(n * 0.18)), (int(n * 0.56), int(n * 0.4)), 255, -1)
    star = np.zeros((n, n), np.uint8)
    angles = np.pi * 2 * np.arange(10) / 10 - np.pi / 2
    radii = np.where(np.arange(10) % 2 == 0, 0.32 * n, 0.15 * n)
    pts = np.stack([n / 2 + radii * np.cos(angles), n / 2 + radii * np.sin(angles)], axis=1)
    cv2.fillPoly(star, [pts.astype(np.int32)], 255, cv2.LINE_AA)
    return {"bottle": bottle, "star": star}


def fills(n: int) -> dict[str, npt.NDArray[np.float32]]:
    """Object surfaces: flat blue with a highlight, and a photo texture (coffee)."""
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
    light = 0.6 + 0.4 * np.clip(
        1 - ((xx - n * 0.42) ** 2 + (yy - n * 0.5) ** 2) / (0.3 * n) ** 2, 0, 1
    )
    blue = np.array([30, 90, 200], np.float32) * light[..., None]
    coffee = cv2.resize(photo("coffee")[50:350, 150:450], (n, n)).astype(np.float32)
    return {"flat": blue, "photo": coffee}


def backgrounds(n: int) -> dict[str, npt.NDArray[np.float32]]:
    t = np.linspace(0.0, 1.0, n, dtype=np.float32)[:, None, None]
    gradient = (
        np.array([240, 220, 190], np.float32) * (1 - t) + np.array([120, 140, 170], np.float32) * t
    )
    brick = cv2.resize(photo("brick"), (n, n)).astype(np.float32)
    return {
        "plain": np.full((n, n, 3), (225, 224, 228), np.float32),
        "gradient": np.broadcast_to(gradient, (n, n, 3)).astype(np.float32),
        "textured": brick[..., None] * np.array([1.0, 0.85, 0.7], np.float32),
    }


def iou(a: npt.NDArray[np.bool_], b: npt.NDArray[np.bool_]) -> float:
    return float((a & b).sum()) / float((a | b).sum())


def quality_rows() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    removal, transparent = BackgroundRemovalEngine(), MakeTransparentEngine()
    for shape_name, shape in shapes(SIZE).items():
        a = shape.astype(np.float32)[..., None] / 255.0
        truth = shape > 127
        for fill_name, fill in fills(SIZE).items():
            for bg_name, bg in backgrounds(SIZE).items():
                rgb = (fill * a + bg * (1 - a) + 0.5).astype(np.uint8)
                bg_out = removal.run(EngineInputs(rgb), BackgroundRemovalParams())
                mt_out = transparent.run(EngineInputs(rgb), MakeTransparentParams())
                rows.append(
                    {
                        "object": f"{shape_name}/{fill_name}",
                        "background": bg_name,
                        "u2netp raw IoU": iou(coarse_mask(rgb) > 0.5, truth),
                        "+guided IoU": iou(salient_mask(rgb) > 0.5, truth),
                        "background_removal IoU": iou(bg_out.images[0].pixels[..., 3] > 127, truth),
                        "make_transparent IoU": iou(mt_out.images[0].pixels[..., 3] > 127, truth),
                        "make_transparent method": str(mt_out.details["method"]).split(" (")[0][
                            :28
                        ],
                    }
                )
    return rows


def speed_rows() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    removal, transparent = BackgroundRemovalEngine(), MakeTransparentEngine()
    removal.load()
    logo = np.full((SIZE, SIZE, 3), 255, np.uint8)
    cv2.putText(
        logo, "LOGO", (40, 300), cv2.FONT_HERSHEY_DUPLEX, 4.0, (200, 30, 40), 14, cv2.LINE_AA
    )
    for mp in (1.0, 0.25):
        astronaut = resize_to_area(photo("astronaut"), mp)
        plain_logo = resize_to_area(logo, mp)
        cases: list[tuple[str, str, ImageArray, Engine, BaseModel]] = [
            ("background_removal", "astronaut", astronaut, removal, BackgroundRemovalParams()),
            ("make_transparent", "astronaut", astronaut, transparent, MakeTransparentParams()),
            ("make_transparent", "logo on white", plain_logo, transparent, MakeTransparentParams()),
        ]
        for engine_name, image_name, image, engine, params in cases:
            h, w = image.shape[:2]
            run = partial(engine.run, EngineInputs(image), params)
            seconds = time_call(run, repeat=3, warmup=1)
            method = str(run().details["method"])
            rows.append(
                {
                    "engine": engine_name,
                    "image": image_name,
                    "size": f"{w}x{h}",
                    "path": "colour key" if method.startswith("colour key") else "u2netp",
                    "ms": seconds * 1000,
                    "ms/MP": ms_per_mp(seconds, h, w),
                }
            )
    return rows


def main() -> None:
    print_table(speed_rows(), "Background engines: speed (median of 3 after 1 warm-up)")
    rows = quality_rows()
    print_table(rows, f"Mask IoU against the known shape ({SIZE}x{SIZE} composites)")
    for key in ("u2netp raw IoU", "+guided IoU", "background_removal IoU", "make_transparent IoU"):
        values = [float(str(r[key])) for r in rows]
        print(f"{key}: mean {np.mean(values):.4f}, min {np.min(values):.4f}")


if __name__ == "__main__":
    main()
