"""Benchmark platform ads and ad packs: milliseconds per ad per platform, and the wall time of
a whole ad pack (page fetch, product image fetch and cut-out, 6 scenes, 8 ads, captions and,
when installed, the UGC video).

Run: ``.venv/bin/python bench/ads.py [--repeat 3] [--no-video] [--sheet docs/ads.jpg]``

``render ms`` is the layout alone (background, product, type, contrast checks) on a cut-out
made once; ``with cut-out ms`` adds the U²-Net-p cut-out of a 1 MP photo, which is what a
single ``generate-ai-ad`` call does (model loading excluded: a warm-up run first). The ad
pack runs the ``ad_pack`` job kind's plan and renders every planned output in order, as the
job runner does, against a product page served on 127.0.0.1 (no database writes: those take
milliseconds). On a shared machine, expect noise from the neighbours.

With ``--sheet`` it writes a contact sheet of ads in every style across platforms.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.engines.product_photo.test_product_photo import coffee_cup, handbag, sneaker, with_alpha
from tests.support.images import encode
from tests.support.servers import serve_bytes

from _common import print_table, time_call
from pixelmill.credits.pricing import AD_PACK_PRICES
from pixelmill.engines.ads import PLATFORMS, AdCopy, AdEngine, cut_out, render_ad
from pixelmill.engines.base import PlannedFile
from pixelmill.engines.product_text import AdCopyEngine
from pixelmill.engines.scenes import ScenesEngine
from pixelmill.engines.speech import SpeechEngine
from pixelmill.engines.video import TalkingVideoEngine
from pixelmill.imaging import ImageLimits
from pixelmill.jobs.service import Claim
from pixelmill.marketing.ad_kinds import AdPackKind
from pixelmill.marketing.video import Voiceover

COPY = AdCopy(
    headline="Slow mornings, better coffee",
    tagline="Hand-thrown ceramic cup and saucer, 250 ml. Dishwasher safe.",
    cta="Shop now",
    price="$24",
)


def bench_ads(repeat: int) -> None:
    photo = coffee_cup()
    AdEngine().load()
    cutout, _ = cut_out(photo)
    cut_s = time_call(lambda: cut_out(photo), repeat=repeat)
    rows = []
    for name, spec in PLATFORMS.items():
        seconds = time_call(partial(render_ad, cutout, spec, "minimal", COPY), repeat)
        styles = [
            time_call(partial(render_ad, cutout, spec, s, COPY), 1, 0)
            for s in ("bold", "elegant", "vibrant", "dark")
        ]
        rows.append(
            {
                "platform": name,
                "size": f"{spec.width}x{spec.height}",
                "render ms (minimal)": round(seconds * 1000),
                "render ms (other styles, max)": round(max(styles) * 1000),
                "with cut-out ms": round((seconds + cut_s) * 1000),
            }
        )
    h, w = photo.shape[:2]
    print_table(rows, f"ms per ad ({w}x{h} photo; cut-out {cut_s * 1000:.0f} ms)")


PAGE = """<!doctype html><html><head><title>Cup</title>
<script type="application/ld+json">{ld}</script></head><body></body></html>"""


def bench_pack(video: bool) -> None:
    ld = {
        "@type": "Product",
        "name": "Stoneware espresso cup and saucer",
        "description": "Hand-thrown and glazed in small batches. Holds 90 ml. Dishwasher safe.",
        "brand": "Kiln & Co",
        "image": "/cup.jpg",
        "offers": {"price": "24.00", "priceCurrency": "USD"},
    }
    routes = {
        "/p": (200, "text/html", PAGE.format(ld=json.dumps(ld)).encode()),
        "/cup.jpg": (200, "image/jpeg", encode(coffee_cup(), "JPEG", quality=92)),
    }
    parts = {k: v for k, v in AD_PACK_PRICES.items() if video or k != "video"}
    kind = AdPackKind(
        scenes=ScenesEngine(),
        ads=AdEngine(),
        limits=ImageLimits(max_bytes=50 * 1024 * 1024, max_pixels=50_000_000),
        allow_loopback=True,
        scene_size=1024,
        voiceover=Voiceover(SpeechEngine(), TalkingVideoEngine()),
        copywriter=AdCopyEngine(),
    )
    with serve_bytes(routes) as base:
        claim = Claim(
            job_id="bench", token=1, user_id=0, batch_id=None, reservation_id="-",
            kind="ad_pack", input_key="", category="other", count=0, seed=1,
            params={"url": f"{base}/p", "parts": parts}, unit_price=0, done=frozenset(),
        )  # fmt: skip
        kind.ads.load()
        kind.scenes.load()
        started = time.perf_counter()
        planned = kind.plan(claim)
        rows = [
            {"step": "plan (page, image, cut-outs)", "s": round(time.perf_counter() - started, 2)}
        ]
        groups: dict[str, float] = {}
        for item in planned:
            t = time.perf_counter()
            out = item.render()
            if not isinstance(item, PlannedFile):
                encode(np.asarray(out.pixels), "JPEG", quality=90)  # type: ignore[union-attr]
            group = item.label.split(":", 1)[0]
            groups[group] = groups.get(group, 0.0) + time.perf_counter() - t
        rows += [{"step": g, "s": round(s, 2)} for g, s in groups.items()]
        rows.append({"step": "ad pack wall time", "s": round(time.perf_counter() - started, 2)})
    print_table(rows, f"ad pack ({'with' if video else 'without'} video), 1 thread")


def sheet(path: Path) -> None:
    AdEngine().load()
    cup = cut_out(coffee_cup())[0]
    shoe = cut_out(with_alpha(sneaker()))[0]
    bag = cut_out(with_alpha(handbag()))[0]
    shoe_copy = AdCopy(
        "Run the city", "Breathable knit upper, cushioned sole. Sizes 36-46.", "Shop now", "$89"
    )
    bag_copy = AdCopy(
        "Carry it all, beautifully", "Full-grain leather, made to last.", "Discover", ""
    )
    tiles = [
        render_ad(cup, PLATFORMS["instagram-square"], "minimal", COPY),
        render_ad(shoe, PLATFORMS["instagram-story"], "bold", shoe_copy),
        render_ad(bag, PLATFORMS["pinterest"], "elegant", bag_copy),
        render_ad(cup, PLATFORMS["facebook-square"], "vibrant", COPY),
        render_ad(shoe, PLATFORMS["tiktok"], "dark", shoe_copy),
        render_ad(shoe, PLATFORMS["twitter"], "dark", shoe_copy),
        render_ad(bag, PLATFORMS["linkedin"], "minimal", bag_copy),
        render_ad(cup, PLATFORMS["facebook-feed"], "elegant", COPY),
    ]
    gap = 16
    rows = [(tiles[:5], 600), (tiles[5:], 440)]
    laid = [
        [
            Image.fromarray(t.pixels).resize(
                (round(t.pixels.shape[1] * h / t.pixels.shape[0]), h), Image.Resampling.LANCZOS
            )
            for t in row
        ]
        for row, h in rows
    ]
    width = max(sum(i.width for i in row) + gap * (len(row) + 1) for row in laid)
    canvas = Image.new("RGB", (width, sum(h for _, h in rows) + gap * 3), (228, 228, 228))
    y = gap
    for row, (_, h) in zip(laid, rows, strict=True):
        x = (width - sum(i.width for i in row) - gap * (len(row) - 1)) // 2
        for im in row:
            canvas.paste(im, (x, y))
            x += im.width + gap
        y += h + gap
    canvas.save(path, quality=86, optimize=True)
    print(f"wrote {path} ({path.stat().st_size // 1024} KiB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-video", action="store_true")
    parser.add_argument("--sheet", type=Path)
    args = parser.parse_args()
    if args.sheet:
        sheet(args.sheet)
        return
    bench_ads(args.repeat)
    bench_pack(video=False)
    if not args.no_video:
        bench_pack(video=True)


if __name__ == "__main__":
    main()
