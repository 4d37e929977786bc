"""The contact sheet ``docs/product-photo-reference.jpg``: a reference avatar made from an
ordinary portrait (``skimage.data.astronaut()``) and the four product photos of a drawn
T-shirt that a product-photo job asks of it, rendered as the job does (the avatar at 1024 px
with its landmarks, the photos at 1024 px), with what each output reports (scene, placement,
framing, tries).

Run: ``.venv/bin/python bench/product_photo_reference.py [--out docs/product-photo-reference.jpg]
[--category clothing] [--seed 0]``

Before the fix two of the four (the T-shirt beside her on the side where the photo cuts her
arm off) failed the in-frame gate on every try; a bag at the hip failed four of four.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
from PIL import Image, ImageDraw
from skimage import data

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.engines.product_photo.test_product_photo import handbag, tshirt

from pixelmill.engines.avatar import ReferenceAvatarEngine, ReferenceAvatarParams
from pixelmill.engines.base import EngineError, EngineInputs
from pixelmill.engines.product_photo import ProductPhotoEngine, ProductPhotoParams

U8 = npt.NDArray[np.uint8]
TILE_H = 400


def tile(pixels: U8, caption: str) -> Image.Image:
    h, w = pixels.shape[:2]
    width = round(w * TILE_H / h)
    small = cv2.resize(pixels[..., :3], (width, TILE_H), interpolation=cv2.INTER_AREA)
    im = Image.new("RGB", (width, TILE_H + 44), "white")
    im.paste(Image.fromarray(small), (0, 0))
    draw = ImageDraw.Draw(im)
    for i, line in enumerate(caption.split("\n")[:3]):
        draw.text((4, TILE_H + 2 + 14 * i), line, fill=(0, 0, 0))
    return im


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="docs/product-photo-reference.jpg")
    ap.add_argument("--category", default="clothing", choices=["clothing", "bags"])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    portrait = data.astronaut()  # type: ignore[no-untyped-call]
    reference = ReferenceAvatarEngine()
    reference.load()
    params = ReferenceAvatarParams(num_outputs=1, seed=args.seed, height=1024)
    avatar = reference.plan(EngineInputs(portrait), params)[0].render()
    product = tshirt() if args.category == "clothing" else handbag()
    engine = ProductPhotoEngine()
    engine.load()
    photo_params = ProductPhotoParams(
        num_outputs=4,
        category=args.category,
        seed=args.seed,
        size=1024,
        landmarks=avatar.data["landmarks"],
    )
    started = time.perf_counter()
    planned = engine.plan(EngineInputs(avatar.pixels, {"product": product}), photo_params)
    tiles = [
        tile(portrait, "input portrait\n(skimage astronaut)"),
        tile(avatar.pixels, "reference avatar"),
        tile(product, f"product ({args.category})"),
    ]
    delivered = 0
    for p in planned:
        try:
            out = p.render()
        except EngineError as exc:
            print(f"output {p.position}: FAILED: {exc}")
            tiles.append(tile(np.full((1024, 768, 3), 230, np.uint8), f"{p.position}: failed"))
            continue
        delivered += 1
        d = out.data
        print(f"output {p.position}: {out.label} · {d['framing']} · tries {d['tries']}")
        caption = (
            f"{p.position}: {out.label}\n{d['placement']}, {d['framing']} body, tries {d['tries']}"
        )
        tiles.append(tile(out.pixels, caption))
    print(f"{delivered} of {len(planned)} delivered in {time.perf_counter() - started:.1f} s")
    width = sum(t.width for t in tiles[:3])
    row2 = sum(t.width for t in tiles[3:])
    sheet = Image.new("RGB", (max(width, row2), 2 * (TILE_H + 44)), "white")
    x = 0
    for t in tiles[:3]:
        sheet.paste(t, (x, 0))
        x += t.width
    x = 0
    for t in tiles[3:]:
        sheet.paste(t, (x, TILE_H + 44))
        x += t.width
    sheet.save(args.out, quality=85)
    print(f"wrote {args.out} ({sheet.width}×{sheet.height})")


if __name__ == "__main__":
    main()
