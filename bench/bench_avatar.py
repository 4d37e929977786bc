"""Benchmark the avatar engines: milliseconds per output image.

Run: ``.venv/bin/python bench/bench_avatar.py [--height 1024] [--repeat 3] [--sheet PATH]``

Guided: one avatar per prompt of a fixed set (wall time and CPU time of ``render()``, median
over the prompts), plus ``plan()`` alone (reading the prompt, settling the looks). Reference:
on the astronaut photo (``skimage.data.astronaut()``, 512²), ``plan()`` alone (person detection,
what runs before credits are reserved), the first render of a plan (it also makes the shared
cut-out) and each further render. Model loading is excluded (a warm-up run first). On a shared
machine, read the CPU column: the wall column also measures the neighbours.

It also prints the variety of :data:`SHEET_PROMPTS` (pairwise mean absolute difference of
48×64 thumbnails, the measure ``tests/engines/avatar/test_guided.py`` asserts), and with
``--sheet`` writes the contact sheet ``docs/avatars.jpg``: the 12 guided prompts, then reference
avatars of ``skimage.data.astronaut()`` and matplotlib's bundled ``grace_hopper.jpg`` beside
their input photos.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from collections.abc import Callable

import cv2
import matplotlib.cbook as cbook
import numpy as np
import numpy.typing as npt
from skimage import data

from _common import print_table
from pixelmill.engines.avatar import (
    GuidedAvatarEngine,
    GuidedAvatarParams,
    ReferenceAvatarEngine,
    ReferenceAvatarParams,
)
from pixelmill.engines.base import EngineInputs

PROMPTS = (
    "young woman, long red hair, green sweater, blue jeans, waving, park",
    "middle-aged man, beard, navy suit, office",
    "senior woman, grey bob, glasses, lavender cardigan, studio",
    "teen boy, curly hair, orange hoodie, shorts, city",
    "woman, afro, yellow dress, beach",
    "man, buzz cut, white t-shirt, black jeans, hands in pockets",
)


SHEET_PROMPTS = (
    "a young woman with long red hair, green sweater, blue jeans, waving, in a park",
    "middle-aged man with a beard, short black hair, navy suit, office",
    "senior woman, grey bob, glasses, lavender cardigan, beige trousers, smiling",
    "teen boy, curly brown hair, orange hoodie, shorts, sneakers, city",
    "woman with dark brown skin, afro, yellow dress, beach",
    "man, tan skin, buzz cut, white t-shirt, black jeans, hands in pockets",
    "non-binary person, pink hair, denim jacket, black trousers, night",
    "little girl, blonde ponytail, red and white striped t-shirt, denim skirt, celebrating",
    "businesswoman, black hair in a bun, grey blazer, skirt, hands on hips, office",
    "plus-size man, bald, glasses, green polo, khaki trousers, presenting",
    "woman, olive skin, wavy brown hair, coral tank top, white shorts, sunset",
    "athletic man, dark skin, braids, red hoodie, joggers, studio",
)
"""The prompts of the contact sheet and of the variety measure (the test uses the same set)."""


def photo(name: str) -> npt.NDArray[np.uint8]:
    """A scikit-image sample photo (bundled, offline)."""
    return np.ascontiguousarray(getattr(data, name)(), dtype=np.uint8)


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def median_ms(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return (
        1000 * statistics.median(s[0] for s in samples),
        1000 * statistics.median(s[1] for s in samples),
    )


def bench_guided(height: int, repeat: int) -> list[dict[str, object]]:
    engine = GuidedAvatarEngine()
    engine.run(EngineInputs.none(), GuidedAvatarParams(prompt=PROMPTS[0], height=height))
    renders: list[tuple[float, float]] = []
    plans: list[tuple[float, float]] = []
    for _ in range(repeat):
        for prompt in PROMPTS:
            params = GuidedAvatarParams(prompt=prompt, height=height)
            plans.append(timed(lambda p=params: engine.plan(EngineInputs.none(), p)))  # type: ignore[misc]
            planned = engine.plan(EngineInputs.none(), params)
            renders.append(timed(planned[0].render))
    rows: list[dict[str, object]] = []
    for name, samples in (("guided: plan()", plans), ("guided: render one avatar", renders)):
        wall, cpu = median_ms(samples)
        rows.append({"step": name, "wall ms": f"{wall:.0f}", "cpu ms": f"{cpu:.0f}"})
    return rows


def bench_reference(height: int, repeat: int) -> list[dict[str, object]]:
    engine = ReferenceAvatarEngine()
    image = photo("astronaut")
    params = ReferenceAvatarParams(num_outputs=4, height=height)
    engine.run(EngineInputs(image), ReferenceAvatarParams(height=height))
    plans, firsts, others = [], [], []
    for _ in range(repeat):
        plans.append(timed(lambda: engine.plan(EngineInputs(image), params)))
        planned = engine.plan(EngineInputs(image), params)
        firsts.append(timed(planned[0].render))
        others += [timed(p.render) for p in planned[1:]]
    rows: list[dict[str, object]] = []
    for name, samples in (
        ("reference: plan() (person detection)", plans),
        ("reference: first render (+ cut-out)", firsts),
        ("reference: each further render", others),
    ):
        wall, cpu = median_ms(samples)
        rows.append({"step": name, "wall ms": f"{wall:.0f}", "cpu ms": f"{cpu:.0f}"})
    first_wall, _ = median_ms(firsts)
    other_wall, _ = median_ms(others)
    plan_wall, _ = median_ms(plans)
    per_image = (plan_wall + first_wall + 3 * other_wall) / 4
    rows.append({"step": "reference: per image in a 4-variant call", "wall ms": f"{per_image:.0f}",
                 "cpu ms": ""})  # fmt: skip
    return rows


def thumb(pixels: npt.NDArray[np.uint8]) -> npt.NDArray[np.float64]:
    return cv2.resize(pixels, (48, 64), interpolation=cv2.INTER_AREA).astype(np.float64)


def variety(height: int = 256) -> dict[str, float]:
    """Smallest and median pairwise thumbnail difference of the sheet prompts (seed 0), with
    each avatar's own backdrop and with all on one white backdrop (only the person differs)."""
    engine = GuidedAvatarEngine()
    out: dict[str, float] = {}
    for label, chars in (
        ("own backdrop", None),
        ("same backdrop", {"background": "white background"}),
    ):
        thumbs = [
            thumb(
                engine.run(
                    EngineInputs.none(),
                    GuidedAvatarParams(prompt=p, characteristics=chars, height=height),
                )
                .images[0]
                .pixels
            )
            for p in SHEET_PROMPTS
        ]
        diffs = [float(np.abs(a - b).mean()) for a, b in itertools.combinations(thumbs, 2)]
        out[f"{label}: min"] = min(diffs)
        out[f"{label}: median"] = float(np.median(diffs))
    return out


def _caption(tile: npt.NDArray[np.uint8], text: str) -> npt.NDArray[np.uint8]:
    band = np.full((30, tile.shape[1], 3), 250, np.uint8)
    scale = 0.42
    while cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)[0][0] > tile.shape[1] - 8:
        scale -= 0.02
    cv2.putText(band, text, (4, 20), cv2.FONT_HERSHEY_SIMPLEX, scale, (40, 40, 40), 1, cv2.LINE_AA)
    return np.concatenate([tile, band], 0)


def _letterbox(img: npt.NDArray[np.uint8], h: int, w: int) -> npt.NDArray[np.uint8]:
    k = min(h / img.shape[0], w / img.shape[1])
    small = cv2.resize(
        img, (round(img.shape[1] * k), round(img.shape[0] * k)), interpolation=cv2.INTER_AREA
    )
    out = np.full((h, w, 3), 235, np.uint8)
    y, x = (h - small.shape[0]) // 2, (w - small.shape[1]) // 2
    out[y : y + small.shape[0], x : x + small.shape[1]] = small
    return out


def contact_sheet(path: str, height: int = 512) -> None:
    """12 guided avatars (seed i for prompt i) and reference avatars of two bundled photos."""
    guided = GuidedAvatarEngine()
    tiles = []
    for i, prompt in enumerate(SHEET_PROMPTS):
        out = guided.run(
            EngineInputs.none(), GuidedAvatarParams(prompt=prompt, seed=i, height=height)
        ).images[0]
        tiles.append(_caption(out.pixels, f"{i + 1}. {prompt}"))
    reference = ReferenceAvatarEngine()
    w = round(height * 3 / 4)
    hopper_file = cbook.get_sample_data("grace_hopper.jpg", asfileobj=False)
    hopper_bgr = cv2.imread(str(hopper_file))
    assert hopper_bgr is not None, hopper_file
    hopper = np.ascontiguousarray(hopper_bgr[..., ::-1], dtype=np.uint8)
    for name, image, details in (
        ("skimage astronaut", photo("astronaut"), "cartoon"),
        ("matplotlib grace_hopper.jpg", hopper, "watercolor, blue background"),
    ):
        tiles.append(_caption(_letterbox(image, height, w), f"input: {name}"))
        params = ReferenceAvatarParams(
            num_outputs=2, seed=4, height=height, additional_details=details
        )
        for out in reference.run(EngineInputs(image), params).images:
            tiles.append(_caption(out.pixels, f"reference: {out.label}"))
    rows = [np.concatenate(tiles[r : r + 6], 1) for r in range(0, len(tiles), 6)]
    sheet = np.concatenate(rows, 0)
    flags = [cv2.IMWRITE_JPEG_QUALITY, 85] if path.endswith(".jpg") else []
    cv2.imwrite(path, np.ascontiguousarray(sheet[..., ::-1]), flags)
    print(f"wrote {path}: {sheet.shape[1]}x{sheet.shape[0]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--height", type=int, default=1024, help="avatar height in pixels")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds (median)")
    parser.add_argument("--sheet", help="also write the contact sheet to this path (.jpg or .png)")
    args = parser.parse_args()
    if args.sheet:
        contact_sheet(args.sheet)
    print(f"avatar height {args.height} (width {round(args.height * 3 / 4)})")
    print_table(bench_guided(args.height, args.repeat) + bench_reference(args.height, args.repeat))
    print_table([{"variety (grey levels)": k, "value": f"{v:.1f}"} for k, v in variety().items()])


if __name__ == "__main__":
    main()
