"""Benchmark the product-photo and try-on engines: milliseconds per output image.

Run: ``.venv/bin/python bench/bench_people.py [--size 1024] [--outputs 6] [--sheet PATH]``

Each engine runs on gallery avatars rendered by the guided engine at 1024 px (with their
landmarks, as the job runner passes them) and on the astronaut photo's reference avatar:
``plan()`` alone (what runs before credits are reserved: MediaPipe pose, the product cut-out
with U²-Net-p, the garment's outline), the first render of a plan (it also makes the shared
person cut-out, GrabCut; for try-on the fit: warp, shading, arms) and each further render
(painting the scene, framing, compositing). ``ms per output`` is the whole call divided by
the outputs. Model loading is excluded (a warm-up run first). On a shared machine read the
CPU column: the wall column also measures the neighbours.

With ``--sheet`` it writes the contact sheet ``docs/people.jpg``: product photos on gallery
avatars (one per category group), try-ons of four drawn garments on gallery avatars, the
reference avatar of ``skimage.data.astronaut()`` with both (input photo, avatar, results,
products), and a row of the input products and garments.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.engines.product_photo.test_product_photo import (
    MAGENTA,
    astronaut,
    bottle,
    chair,
    coffee_cup,
    dress,
    gallery_avatar,
    handbag,
    necklace,
    phone,
    sneaker,
    sweater,
    tank_top,
    tshirt,
    with_alpha,
)

from _common import print_table
from pixelmill.engines.avatar import ReferenceAvatarEngine, ReferenceAvatarParams
from pixelmill.engines.base import EngineInputs, MultiImageEngine
from pixelmill.engines.product_photo import ProductPhotoEngine, ProductPhotoParams
from pixelmill.engines.tryon import TryOnEngine, TryOnParams

U8 = npt.NDArray[np.uint8]


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of one call."""
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def reference_avatar(height: int) -> tuple[U8, dict[str, Any]]:
    """The astronaut photo as a reference avatar (half body, white studio)."""
    engine = ReferenceAvatarEngine()
    params = ReferenceAvatarParams(num_outputs=1, height=height)
    out = engine.plan(EngineInputs(astronaut()), params)[0].render()
    return out.pixels, out.data["landmarks"]


def bench_case(
    engine: MultiImageEngine, inputs: EngineInputs, params: Any, name: str
) -> dict[str, object]:
    """Plan, first render and further renders of one call (after a warm-up call)."""
    for p in engine.plan(inputs, params)[:1]:
        p.render()
    box: dict[str, Any] = {}

    def plan() -> None:
        box["planned"] = engine.plan(inputs, params)

    plan_t = timed(plan)
    renders = [timed(p.render) for p in box["planned"]]
    first, rest = renders[0], renders[1:]
    n = len(renders)
    total_wall = plan_t[0] + sum(r[0] for r in renders)
    total_cpu = plan_t[1] + sum(r[1] for r in renders)
    return {
        "case": name,
        "outputs": n,
        "plan ms (wall/cpu)": f"{plan_t[0] * 1000:.0f} / {plan_t[1] * 1000:.0f}",
        "first render ms": f"{first[0] * 1000:.0f} / {first[1] * 1000:.0f}",
        "each further ms": (
            f"{statistics.median(r[0] for r in rest) * 1000:.0f} / "
            f"{statistics.median(r[1] for r in rest) * 1000:.0f}"
            if rest
            else "-"
        ),
        "ms per output (wall/cpu)": f"{total_wall / n * 1000:.0f} / {total_cpu / n * 1000:.0f}",
    }


def bench(size: int, outputs: int) -> list[dict[str, object]]:
    product = ProductPhotoEngine()
    tryon = TryOnEngine()
    rows = []
    for index in (0, 6):
        avatar, landmarks = gallery_avatar(index, 1024)
        rows.append(
            bench_case(
                product,
                EngineInputs(avatar, {"product": bottle()}),
                ProductPhotoParams(
                    num_outputs=outputs, category="beauty", size=size, landmarks=landmarks
                ),
                f"product_photo, gallery {index}, bottle",
            )
        )
        rows.append(
            bench_case(
                tryon,
                EngineInputs(avatar, {"product": tshirt()}),
                TryOnParams(
                    num_outputs=outputs, category="clothing", size=size, landmarks=landmarks
                ),
                f"tryon, gallery {index}, T-shirt",
            )
        )
    ref, ref_landmarks = reference_avatar(1024)
    rows.append(
        bench_case(
            product,
            EngineInputs(ref, {"product": bottle()}),
            ProductPhotoParams(
                num_outputs=outputs, category="beauty", size=size, landmarks=ref_landmarks
            ),
            "product_photo, astronaut reference, bottle",
        )
    )
    rows.append(
        bench_case(
            tryon,
            EngineInputs(ref, {"product": tshirt()}),
            TryOnParams(
                num_outputs=outputs, category="clothing", size=size, landmarks=ref_landmarks
            ),
            "tryon, astronaut reference, T-shirt",
        )
    )
    return rows


# --- the contact sheet ------------------------------------------------------------------------

TILE_H, TILE_W = 320, 240
CAPTION = 22


def _tile(img: U8, text: str) -> U8:
    """``img`` letterboxed into a tile with a caption strip below."""
    h, w = img.shape[:2]
    k = min(TILE_H / h, TILE_W / w)
    small = cv2.resize(img[..., :3], (round(w * k), round(h * k)), interpolation=cv2.INTER_AREA)
    tile = np.full((TILE_H + CAPTION, TILE_W, 3), 250, np.uint8)
    y, x = (TILE_H - small.shape[0]) // 2, (TILE_W - small.shape[1]) // 2
    tile[y : y + small.shape[0], x : x + small.shape[1]] = small
    cv2.putText(tile, text[:44], (4, TILE_H + 15), cv2.FONT_HERSHEY_SIMPLEX, 0.32, (40, 40, 40), 1,
                cv2.LINE_AA)  # fmt: skip
    return tile


def _row(tiles: list[U8], width: int) -> U8:
    row = np.concatenate(tiles, axis=1)
    if row.shape[1] < width:
        pad = np.full((row.shape[0], width - row.shape[1], 3), 250, np.uint8)
        row = np.concatenate([row, pad], axis=1)
    return row


def contact_sheet(path: str, size: int = 800) -> None:
    product = ProductPhotoEngine()
    tryon = TryOnEngine()
    per_row = 8
    rows: list[U8] = []
    photo_cases = [
        (0, bottle(), "beauty", None),
        (1, handbag(), "bags", None),
        (6, coffee_cup(), "food", "kitchen"),
        (3, chair(), "furniture", None),
        (4, necklace(), "jewelry", None),
        (7, phone(), "electronics", "city at night"),
        (9, with_alpha(sneaker()), "shoes", None),
        (8, tshirt(), "clothing", "garden"),
    ]
    tiles = []
    for index, item, category, prompt in photo_cases:
        avatar, landmarks = gallery_avatar(index, 1024)
        params = ProductPhotoParams(
            num_outputs=1, category=category, prompt=prompt, size=size, landmarks=landmarks,
            seed=index,
        )  # fmt: skip
        out = product.run(EngineInputs(avatar, {"product": item}), params).images[0]
        tiles.append(_tile(out.pixels, out.label))
    rows.append(_row(tiles, per_row * TILE_W))
    tryon_cases = [
        (0, tshirt()), (1, sweater()), (2, tank_top()), (3, dress()),
        (4, tshirt(MAGENTA, stripe=False)), (5, sweater((150, 40, 40))), (6, tank_top()),
        (9, tshirt((30, 90, 60))),
    ]  # fmt: skip
    tiles = []
    for i, (index, garment) in enumerate(tryon_cases):
        avatar, landmarks = gallery_avatar(index, 1024)
        fit = TryOnParams(
            num_outputs=2, category="clothing", size=size, landmarks=landmarks, seed=index
        )
        out = tryon.run(EngineInputs(avatar, {"product": garment}), fit).images[i % 2]
        tiles.append(_tile(out.pixels, f"try-on: {out.label}"))
    rows.append(_row(tiles, per_row * TILE_W))
    ref, ref_landmarks = reference_avatar(1024)
    inputs_tiles = [_tile(astronaut(), "input photo"), _tile(ref, "its reference avatar")]
    photo = product.run(
        EngineInputs(ref, {"product": bottle()}),
        ProductPhotoParams(num_outputs=2, category="beauty", size=size, landmarks=ref_landmarks),
    )
    dressed = tryon.run(
        EngineInputs(ref, {"product": tshirt()}),
        TryOnParams(num_outputs=2, category="clothing", size=size, landmarks=ref_landmarks),
    )
    tiles = inputs_tiles + [_tile(o.pixels, o.label) for o in photo.images]
    tiles += [_tile(o.pixels, f"try-on: {o.label}") for o in dressed.images]
    tiles += [_tile(bottle(), "its product: bottle"), _tile(tshirt(), "its product: T-shirt")]
    rows.append(_row(tiles, per_row * TILE_W))
    inputs = [
        (handbag(), "bags"), (coffee_cup(), "food (a photo)"), (chair(), "furniture"),
        (phone(), "electronics"), (tshirt(), "garment"), (sweater(), "garment"),
        (tank_top(), "garment"), (dress(), "garment"),
    ]  # fmt: skip
    rows.append(_row([_tile(img, f"input: {what}") for img, what in inputs], per_row * TILE_W))
    sheet = np.concatenate(rows, axis=0)
    flags = [cv2.IMWRITE_JPEG_QUALITY, 85] if path.endswith(".jpg") else []
    cv2.imwrite(path, np.ascontiguousarray(sheet[..., ::-1]), flags)
    print(f"wrote {path}: {sheet.shape[1]}x{sheet.shape[0]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=1024, help="output height (default 1024)")
    parser.add_argument("--outputs", type=int, default=6, help="outputs per call (default 6)")
    parser.add_argument("--sheet", help="write the contact sheet to this path")
    parser.add_argument("--no-bench", action="store_true", help="only write the sheet")
    args = parser.parse_args()
    if args.sheet:
        contact_sheet(args.sheet)
    if not args.no_bench:
        print_table(bench(args.size, args.outputs))


if __name__ == "__main__":
    main()
