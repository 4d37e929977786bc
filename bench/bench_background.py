"""Benchmark the background engines: speed (ms per megapixel) and mask quality (IoU against the
known shape of objects composited on plain, gradient and textured backgrounds), and what the
cut-out output controls (subject type, size, scale, background, shadow, channels, presets) add to
the cost of one background removal.

Run: ``.venv/bin/python bench/bench_background.py`` (``--options`` for the output controls only;
``--ghosts`` for the trimap alpha against the matte before it: composites with a known alpha,
real photos, and the cost; ``--ghost-sheet docs/cutout-ghosts.jpg`` for its contact sheet;
``--parts`` for the multi-part products of ``bench/multipart.py`` and coffee's saucer, before
and after the parts step, and its cost; ``--parts-sheet docs/cutout-parts.jpg`` for its contact
sheet; ``--parts-scenes [DIR]`` for what the step changes on the CBSD68 scene photos, with
``--save FILE.npz`` / ``--against FILE.npz`` to compare two versions; ``--parts-shadows`` for
products with soft shadows on plain and gradient backdrops, where nothing but the product
should join; ``--regions`` for the step's six segmentations against scikit-image's;
``--pockets-sheet docs/cutout-pockets.jpg`` for the backdrop seen through a handle;
``--models-dir DIR`` with ``--parts`` or ``--parts-sizes`` measures the best rembg model in DIR,
as ``PIXELMILL_MODELS_DIR`` would give it, instead of the packaged U²-Net-p; ``--corpus DIR``
[``--per-half N``] [``--max-side S``] [``--save FILE.json``] for the cut-out corpus of
``bench/corpora/cutout_masks.py``, both halves per framing and product type, parts step off and
on; ``--framings`` for coffee's saucer at four framings and two sizes, ``--framings-sheet
docs/cutout-framings.jpg`` for its contact sheet; ``docs/corpora-cutouts.md``)
"""

from __future__ import annotations

import os
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
from PIL import Image
from pydantic import BaseModel
from skimage import data

from _common import ms_per_mp, print_table, print_targets, resize_to_area, time_call
from pixelmill.engines.background.engine import (
    BackgroundRemovalEngine,
    BackgroundRemovalParams,
    MakeTransparentEngine,
    MakeTransparentParams,
    cutout_from,
    finish_cutout,
)
from pixelmill.engines.background.models import RembgSaliency, best_model
from pixelmill.engines.background.options import SubjectType, resolve_cutout
from pixelmill.engines.background.subject import SubjectMatte, subject_matte
from pixelmill.engines.background.trimap import confident_alpha
from pixelmill.engines.base import Engine, EngineInputs, ImageArray
from pixelmill.engines.runtime.segmentation import (
    coarse_mask,
    guided_radius,
    main_object_box,
    mask_to_alpha,
    salient_mask,
    snap_to_edges,
)

sys.path.insert(0, str(Path(__file__).resolve().parent / "corpora"))

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


OPTION_CASES: list[tuple[str, dict[str, Any]]] = [
    ("type=object (the salient mask alone)", {"type": "object"}),
    ("default (type=auto)", {}),
    ("type=product", {"type": "product"}),
    ("type=person", {"type": "person"}),
    ("crop + crop_margin=10%", {"crop": True, "crop_margin": "10%"}),
    ("size=preview", {"size": "preview"}),
    ("bg_color=white + shadow=soft", {"bg_color": "white", "shadow": "soft"}),
    (
        "1000x1000 scale=85% bg_color + shadow",
        {"size": "1000x1000", "scale": "85%", "bg_color": "fff", "shadow": "soft"},
    ),
    ("preset=amazon (2000x2000 out)", {"preset": "amazon"}),
    ("preset=amazon + shadow=hard", {"preset": "amazon", "shadow": "hard"}),
    ("bg_image (cover) + 1500x1000", {"bg_image_url": "x", "size": "1500x1000", "scale": "80%"}),
    ("channels=alpha + 1000x1000", {"channels": "alpha", "size": "1000x1000", "scale": "85%"}),
]


def fastest(fn: Any, repeat: int = 7) -> float:
    """The shortest of ``repeat`` runs after a warm-up, in seconds: on a machine shared with
    other work the minimum is the least disturbed estimate of what a call costs."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def option_rows() -> list[dict[str, object]]:
    """Engine time of one ``background_removal`` with each set of output controls, on a product
    photo (coffee) and a portrait (astronaut) at 1 MP, against the plain salient cut-out; and
    the time of the layout stage alone (crop, resize, background, shadow, composite), which is
    all that the controls other than ``type`` add."""
    rows: list[dict[str, object]] = []
    removal = BackgroundRemovalEngine()
    removal.load()
    backdrop = photo("chelsea")
    for image_name in ("coffee", "astronaut"):
        image = resize_to_area(photo(image_name), 1.0)
        h, w = image.shape[:2]
        inputs = EngineInputs(image, {"background": backdrop})
        base = 0.0
        for label, options in OPTION_CASES:
            params = BackgroundRemovalParams(**options)
            run = partial(removal.run, inputs, params)
            seconds = fastest(run)
            base = base or seconds
            result = run()
            matte = subject_matte(image, params.type)
            rgba = cutout_from(image, matte)
            box = main_object_box(matte.mask)
            kind = params.type

            def cut(image: ImageArray = image, kind: SubjectType = kind) -> ImageArray:
                return cutout_from(image, subject_matte(image, kind))

            cutout = fastest(cut)
            layout = fastest(
                partial(finish_cutout, rgba, resolve_cutout(params), box, {}, backdrop)
            )
            out = result.images[0].pixels
            rows.append(
                {
                    "image": f"{image_name} {w}x{h}",
                    "options": label,
                    "detected": result.details["detected_type"],
                    "output": f"{out.shape[1]}x{out.shape[0]}",
                    "engine ms/MP": ms_per_mp(seconds, h, w),
                    "× plain": seconds / base,
                    "cut-out stage ms": cutout * 1000,
                    "layout stage ms": layout * 1000,
                    "layout / cut-out": layout / cutout,
                }
            )
    return rows


TILE = 360
LABEL = 34


def _strip(tiles: list[ImageArray]) -> ImageArray:
    """``tiles`` side by side, each with a 6 px white margin."""
    return np.hstack([np.pad(t, ((6, 6), (6, 6), (0, 0)), constant_values=255) for t in tiles])


def _save_scaled(sheet: ImageArray, path: str, scale: float) -> None:
    """``sheet`` scaled by ``scale`` (area-averaged), saved as a JPEG at quality 80."""
    size = (round(sheet.shape[1] * scale), round(sheet.shape[0] * scale))
    small = np.asarray(cv2.resize(sheet, size, interpolation=cv2.INTER_AREA), np.uint8)
    Image.fromarray(small).save(path, quality=80, optimize=True)
    print(f"wrote {path}")


def _on_checkerboard(rgba: ImageArray) -> ImageArray:
    """A transparent result drawn over the usual grey checkerboard."""
    h, w = rgba.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w]
    board = np.where(((yy // 12 + xx // 12) % 2)[..., None] == 0, 255.0, 222.0)
    a = rgba[..., 3:].astype(np.float32) / 255.0
    return np.asarray(rgba[..., :3] * a + board * (1.0 - a) + 0.5, dtype=np.uint8)


def _tile(pixels: ImageArray, label: str) -> ImageArray:
    if pixels.ndim == 2:
        pixels = np.dstack([pixels] * 3)
    elif pixels.shape[2] == 4:
        pixels = _on_checkerboard(pixels)
    h, w = pixels.shape[:2]
    f = TILE / max(h, w)
    size = (max(1, round(w * f)), max(1, round(h * f)))
    small = cv2.resize(pixels, size, interpolation=cv2.INTER_AREA)
    tile = np.full((TILE + LABEL, TILE, 3), 255, np.uint8)
    y0, x0 = (TILE - size[1]) // 2, (TILE - size[0]) // 2
    tile[y0 : y0 + size[1], x0 : x0 + size[0]] = small
    cv2.rectangle(tile, (x0, y0), (x0 + size[0] - 1, y0 + size[1] - 1), (200, 200, 200), 1)
    cv2.putText(
        tile, label, (8, TILE + 23), cv2.FONT_HERSHEY_SIMPLEX, 0.52, (40, 40, 40), 1, cv2.LINE_AA
    )
    return tile


def contact_sheet(path: str) -> None:
    """Write the contact sheet of ``docs/cutout-options.jpg``: a product photo and a portrait
    through the main output controls."""
    import matplotlib

    removal = BackgroundRemovalEngine()
    coffee = photo("coffee")
    with Image.open(f"{matplotlib.get_data_path()}/sample_data/grace_hopper.jpg") as im:
        portrait = np.ascontiguousarray(np.asarray(im.convert("RGB"))[:380])

    def cut(image: ImageArray, **options: Any) -> ImageArray:
        return removal.run(EngineInputs(image), BackgroundRemovalParams(**options)).images[0].pixels

    tiles = [
        _tile(coffee, "original (600x400)"),
        _tile(cut(coffee), "default: transparent PNG"),
        _tile(
            cut(coffee, size="1000x1000", scale="80%", bg_color="white", shadow="soft"),
            "bg_color=white, shadow=soft",
        ),
        _tile(cut(coffee, preset="amazon"), "preset=amazon (2000x2000)"),
        _tile(cut(coffee, size="1000x1000", scale="80%", channels="alpha"), "channels=alpha"),
        _tile(portrait, "portrait (512x380)"),
        _tile(
            cut(portrait, type="object", bg_color="#e9eef5", crop=True, crop_margin="4%"),
            "type=object (salient mask)",
        ),
        _tile(
            cut(portrait, type="person", bg_color="#e9eef5", crop=True, crop_margin="4%"),
            "type=person (selfie + salient)",
        ),
    ]
    gap = 12
    cols = 4
    rows = [tiles[i : i + cols] for i in range(0, len(tiles), cols)]
    width = cols * TILE + (cols + 1) * gap
    sheet = np.full((len(rows) * (TILE + LABEL) + (len(rows) + 1) * gap, width, 3), 255, np.uint8)
    for r, row in enumerate(rows):
        for c, tile in enumerate(row):
            y, x = gap + r * (TILE + LABEL + gap), gap + c * (TILE + gap)
            sheet[y : y + TILE + LABEL, x : x + TILE] = tile
    Image.fromarray(sheet).convert("RGB").save(path, optimize=True, quality=88)
    print(f"wrote {path}")


# --- Ghosts (issue 19 item 3): the trimap alpha against the matte before it ----------------

REFERENCE = Path(__file__).resolve().parent.parent / "tests/engines/background/reference"
SHARED_PHOTOS = Path(__file__).resolve().parent.parent.parent / "shared/data/sr-train/CBSD68"
ONE_MP = {
    "astronaut": (1000, 1000),
    "coffee": (1225, 816),
    "chelsea": (1226, 816),
    "rocket": (1224, 817),
}
SCENES = {"241048": "river", "14037": "lake", "260058": "desert"}
"""Backgrounds from the shared research photos (CBSD68), used when they are beside the repo."""
REAL = {"19021": "flowering cactus (plant)", "163085": "chicks (fluffy)", "208001": "mushroom"}


def one_megapixel(name: str) -> ImageArray:
    w, h = ONE_MP[name]
    return np.asarray(cv2.resize(photo(name)[..., :3], (w, h), interpolation=cv2.INTER_CUBIC))


def shared_photo(name: str) -> ImageArray | None:
    path = SHARED_PHOTOS / f"{name}.png"
    if not path.is_file():
        return None
    bgr = np.asarray(cv2.imread(str(path)), np.uint8)
    return np.ascontiguousarray(bgr[..., ::-1])


def old_alpha(image: ImageArray, matte: SubjectMatte) -> npt.NDArray[np.float32]:
    """The matte before the trimap: the same coarse confidence snapped to the image's edges by
    the guided filter and stretched from [0.08, 0.92] (what ``mask_to_alpha`` does)."""
    return mask_to_alpha(snap_to_edges(image, matte.confidence))


def ghost_composites() -> list[tuple[str, ImageArray, npt.NDArray[np.float32]]]:
    """Real foregrounds with an exact alpha over real backgrounds: each skimage subject cut
    out of its photo with the test reference mask (1 MP), the edge feathered (Gaussian sigma
    1.2 px over the textures, 3 px, a soft fur-like edge, over the scene photos)."""
    out = []
    for name in ONE_MP:
        subject = one_megapixel(name).astype(np.float32)
        mask = (np.asarray(Image.open(REFERENCE / f"{name}-auto.png")) > 0).astype(np.float32)
        h, w = mask.shape
        backs: list[tuple[str, npt.NDArray[np.float32], float]] = []
        for texture, tint in (
            ("brick", (1.0, 0.85, 0.7)),
            ("grass", (0.55, 0.85, 0.45)),
            ("gravel", (0.9, 0.88, 0.8)),
        ):
            grey = np.asarray(
                cv2.resize(
                    photo(texture).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC
                ),
                np.float32,
            )
            backs.append((texture, grey[..., None] * np.array(tint, np.float32), 1.2))
        for key, label in SCENES.items():
            scene = shared_photo(key)
            if scene is not None:
                resized = cv2.resize(scene, (w, h), interpolation=cv2.INTER_CUBIC)
                backs.append((label, resized.astype(np.float32), 3.0))
        for label, background, sigma in backs:
            alpha = np.asarray(np.clip(cv2.GaussianBlur(mask, (0, 0), sigma), 0.0, 1.0), np.float32)
            rgb = subject * alpha[..., None] + background * (1.0 - alpha[..., None]) + 0.5
            out.append((f"{name} / {label}", np.clip(rgb, 0, 255).astype(np.uint8), alpha))
    return out


def ghost_scores(
    alpha: npt.NDArray[np.float32], truth: npt.NDArray[np.float32]
) -> dict[str, float]:
    e = guided_radius(*truth.shape)
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * e + 1, 2 * e + 1))
    hard = (truth > 0.5).astype(np.uint8)
    inner = cv2.erode(hard, disc) > 0
    outer = cv2.dilate(hard, disc) == 0
    band = ~inner & ~outer
    union = float(((alpha > 0.5) | (truth > 0.5)).sum())
    return {
        "interior": float(inner.sum()),
        "interior_low": float((alpha[inner] < 0.9).sum()),
        "band_sad": float(np.abs(alpha[band] - truth[band]).sum()),
        "outside_false": float((alpha[outer] > 0.1).sum()),
        "outside": float(outer.sum()),
        "iou": float(((alpha > 0.5) & (truth > 0.5)).sum()) / max(union, 1.0),
    }


def ghost_rows() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    totals = {
        v: dict.fromkeys(("interior", "interior_low", "band_sad", "outside_false", "outside"), 0.0)
        for v in ("old", "new")
    }
    for label, rgb, truth in ghost_composites():
        matte = subject_matte(rgb, "auto")
        row: dict[str, object] = {"composite": label}
        for version, alpha in (("old", old_alpha(rgb, matte)), ("new", matte.alpha)):
            sc = ghost_scores(alpha, truth)
            for key in totals[version]:
                totals[version][key] += sc[key]
            row[f"{version} interior<0.9 %"] = 100 * sc["interior_low"] / max(sc["interior"], 1)
            row[f"{version} band SAD (k)"] = sc["band_sad"] / 1000
            row[f"{version} IoU"] = sc["iou"]
        rows.append(row)
    pooled: dict[str, object] = {"composite": f"POOLED ({len(rows)})"}
    for version, t in totals.items():
        pooled[f"{version} interior<0.9 %"] = 100 * t["interior_low"] / t["interior"]
        pooled[f"{version} band SAD (k)"] = t["band_sad"] / 1000 / len(rows)
        pooled[f"{version} IoU"] = float(np.mean([float(str(r[f"{version} IoU"])) for r in rows]))
    rows.append(pooled)
    scenes = tuple(SCENES.values())
    for version, t in totals.items():
        soft = [
            float(str(r[f"{version} band SAD (k)"]))
            for r in rows[:-1]
            if str(r["composite"]).endswith(scenes)
        ]
        hard = [
            float(str(r[f"{version} band SAD (k)"]))
            for r in rows[:-1]
            if not str(r["composite"]).endswith(scenes)
        ]
        print(
            f"{version}: interior alpha<0.9 {100 * t['interior_low'] / t['interior']:.3f} % "
            f"(pooled), band SAD {t['band_sad'] / 1000 / len(rows[:-1]):.2f}k per image "
            f"(1.2 px edges {np.mean(hard):.2f}k, 3 px edges {np.mean(soft or [np.nan]):.2f}k), "
            f"outside alpha>0.1 {100 * t['outside_false'] / t['outside']:.3f} %"
        )
    return rows


def real_photos() -> dict[str, ImageArray]:
    photos = {f"{n} (1 MP)": one_megapixel(n) for n in ONE_MP}
    for key, label in REAL.items():
        image = shared_photo(key)
        if image is not None:
            photos[f"{label} ({key})"] = image
    return photos


def partly(alpha: npt.NDArray[np.float32]) -> float:
    return 100 * float(((alpha > 0.02) & (alpha < 0.98)).mean())


def real_rows() -> list[dict[str, object]]:
    """Real photos: the share of pixels partly transparent, old and new, and the old ghost
    (alpha 0.1-0.9 before) that is opaque now."""
    rows: list[dict[str, object]] = []
    for label, image in real_photos().items():
        matte = subject_matte(image, "auto")
        old = old_alpha(image, matte)
        ghost = (old > 0.1) & (old < 0.9)
        rows.append(
            {
                "photo": label,
                "old partly transparent %": partly(old),
                "new partly transparent %": partly(matte.alpha),
                "old ghost now opaque %": 100 * float((matte.alpha[ghost] >= 0.9).mean()),
                "IoU new vs old": float(((old > 0.5) & (matte.alpha > 0.5)).sum())
                / float(((old > 0.5) | (matte.alpha > 0.5)).sum()),
            }
        )
    return rows


def alpha_speed_rows() -> list[dict[str, object]]:
    """What the trimap costs: the old and the new alpha from the same coarse confidence, and
    a whole ``background_removal`` at 1 MP (fastest of 7)."""
    image = one_megapixel("astronaut")
    matte = subject_matte(image, "auto")
    removal = BackgroundRemovalEngine()
    removal.load()
    return [
        {
            "step": "old alpha (guided filter + stretch)",
            "ms": 1000 * fastest(partial(old_alpha, image, matte)),
        },
        {
            "step": "new alpha (trimap + band matting)",
            "ms": 1000 * fastest(partial(confident_alpha, image, matte.confidence)),
        },
        {
            "step": "colours (unmixing) on the old alpha",
            "ms": 1000 * fastest(partial(cutout_from, image, old_alpha(image, matte))),
        },
        {
            "step": "colours (unmixing) on the new alpha",
            "ms": 1000 * fastest(partial(cutout_from, image, matte)),
        },
        {
            "step": "background_removal, 1 MP astronaut",
            "ms": 1000
            * fastest(partial(removal.run, EngineInputs(image), BackgroundRemovalParams())),
        },
    ]


def ghosts() -> None:
    print(f"load average (1/5/15 min): {os.getloadavg()}")
    composites = ghost_rows()
    print_table(composites, "Composites with a known alpha: old matte vs trimap alpha")
    print_table(real_rows(), "Real photos: partly transparent pixels, old vs new")
    cost = alpha_speed_rows()
    print_table(cost, "Cost of the alpha step at 1 MP (fastest of 7)")
    print(f"load average (1/5/15 min): {os.getloadavg()}")
    pooled = composites[-1]
    low = float(str(pooled["new interior<0.9 %"]))
    sad_old, sad_new = (float(str(pooled[f"{v} band SAD (k)"])) for v in ("old", "new"))
    ms = {str(r["step"]): float(str(r["ms"])) for r in cost}
    whole = ms["background_removal, 1 MP astronaut"]
    added = ms["new alpha (trimap + band matting)"] - ms["old alpha (guided filter + stretch)"]
    print_targets(
        f"issue #19 item 3, {len(composites) - 1} composites with a known alpha",
        [
            ("interior pixels with alpha < 0.9 under 1 %", low < 1.0, f"{low:.3f} %, pooled"),
            (
                "boundary error (SAD in the unknown band) down",
                sad_new < sad_old,
                f"{sad_old:.2f}k -> {sad_new:.2f}k per image",
            ),
            (
                "speed (no number set)",
                None,
                f"background_removal {whole:.0f} ms at 1 MP, the trimap alpha {added:+.0f} ms",
            ),
        ],
    )


def ghost_sheet(path: str) -> None:
    """``docs/cutout-ghosts.jpg``: for each photo, the input, the old alpha, the new alpha and
    the new cut-out on a checkerboard."""
    removal = BackgroundRemovalEngine()
    # Only the scikit-image photos: the shared research photos (BSD) are for measuring, not
    # for shipping, even as thumbnails.
    photos = {f"{n} (1 MP)": one_megapixel(n) for n in ("chelsea", "coffee", "astronaut", "rocket")}
    rows = []
    for label, image in photos.items():
        matte = subject_matte(image, "auto")
        old = old_alpha(image, matte)
        cut = removal.run(EngineInputs(image), BackgroundRemovalParams()).images[0].pixels
        tiles = [
            _tile(image, label[:40]),
            _tile((old * 255 + 0.5).astype(np.uint8), f"old alpha: {partly(old):.1f} % partial"),
            _tile(
                (matte.alpha * 255 + 0.5).astype(np.uint8),
                f"new alpha: {partly(matte.alpha):.1f} % partial",
            ),
            _tile(cut, "new cut-out"),
        ]
        rows.append(_strip(tiles))
    sheet = np.vstack(rows)
    Image.fromarray(sheet).save(path, quality=85, optimize=True)
    print(f"wrote {path}")


# --- Whole products (issue 44 item 3): attached parts kept, detached fragments dropped -------


def _opaque(alpha: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
    return np.asarray(alpha >= 0.9)


def parts_scores(
    alpha: npt.NDArray[np.float32], parts: list[npt.NDArray[np.bool_]]
) -> dict[str, float]:
    """IoU with the product (the parts' union) and the share of parts kept: >= 90 % opaque
    (alpha >= 0.9) of the part's pixels that are opaque in the composite
    (``multipart.opaque_core``; ``kept, every pixel``: of all its pixels, the measure until
    2026-11-28, which a perfect cut-out fails on a strap 14 px wide, its blurred edge pixels
    being 0.73 in truth)."""
    from multipart import opaque_core

    truth = np.logical_or.reduce(parts)
    opaque = _opaque(alpha)
    kept = [float(opaque[opaque_core(p)].mean()) >= 0.9 for p in parts]
    every = [float(opaque[p].mean()) >= 0.9 for p in parts]
    return {
        "iou": iou(alpha > 0.5, truth),
        "kept": float(np.mean(kept)),
        "kept, every pixel": float(np.mean(every)),
    }


def largest_fragment(alpha: npt.NDArray[np.float32]) -> float:
    """The largest detached component (alpha > 0.5) beside the main one, as a share of the
    subject's area."""
    binary = (alpha > 0.5).astype(np.uint8)
    _count, _, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
    areas = np.sort(stats[1:, cv2.CC_STAT_AREA])
    return 0.0 if areas.size < 2 else float(areas[-2] / areas.sum())


MODELS_DIR: Path | None = None
"""``--models-dir``: the operator's models folder the parts measurements use (None: the
packaged U²-Net-p); ``SALIENCY`` is its best model, loaded."""
SALIENCY: RembgSaliency | None = None


def use_models_dir(folder: Path) -> None:
    """Measure with the best rembg model in ``folder`` (``--models-dir``)."""
    global MODELS_DIR, SALIENCY
    model = best_model(folder)
    if model is None:
        raise SystemExit(f"--models-dir {folder}: no rembg model that opens")
    MODELS_DIR, SALIENCY = folder, RembgSaliency(model)
    SALIENCY.load()
    print(f"saliency: {model.name} ({model.size_bytes / 1e6:.0f} MB) from {folder}")


def parts_rows() -> list[dict[str, object]]:
    from multipart import coffee_saucer, coffee_square, items

    rows: list[dict[str, object]] = []
    for item in items():
        row: dict[str, object] = {"item": item.name, "parts": len(item.parts)}
        for version, on in (("before", False), ("after", True)):
            alpha = subject_matte(item.image, "auto", SALIENCY, parts=on).alpha
            sc = parts_scores(alpha, item.parts)
            row[f"{version} IoU"] = sc["iou"]
            row[f"{version} kept"] = sc["kept"]
            row[f"{version} kept, every pixel"] = sc["kept, every pixel"]
        rows.append(row)
    full = photo("coffee")
    saucer, _ = coffee_saucer()
    square, square_saucer = coffee_square()
    for label, image, mask in (
        ("coffee full", full, saucer),
        ("coffee centre square", square, square_saucer),
    ):
        row = {"item": label, "parts": 1}
        for version, on in (("before", False), ("after", True)):
            alpha = subject_matte(image, "auto", SALIENCY, parts=on).alpha
            row[f"{version} IoU"] = float("nan")
            row[f"{version} kept"] = float(_opaque(alpha)[mask].mean())
            row[f"{version} fragment %"] = 100 * largest_fragment(alpha)
        rows.append(row)
    return rows


PARTS_RUNS = 25
"""Alternated pairs of runs (parts step off, on) per image in :func:`parts_speed`."""


def parts_speed(image: ImageArray, runs: int = PARTS_RUNS) -> dict[str, float]:
    """ms of ``background_removal`` on ``image`` without and with the parts step, timed
    alternately in one process (the machine is shared): ``runs`` pairs after a warm-up; the
    median and the fastest of each, and the median of the pairs' differences (each pair run
    back to back, so a slow spell of the machine weighs on both of its runs)."""
    removal = BackgroundRemovalEngine(MODELS_DIR)
    removal.load()
    params = BackgroundRemovalParams()
    import pixelmill.engines.background.subject as subject_module

    real: Any = subject_module.whole_subject  # type: ignore[attr-defined]

    def off(image: Any, conf: Any, face: Any = None, guide: Any = None) -> Any:
        return conf

    def run(on: bool) -> float:
        setattr(subject_module, "whole_subject", real if on else off)  # noqa: B010
        start = time.perf_counter()
        removal.run(EngineInputs(image), params)
        setattr(subject_module, "whole_subject", real)  # noqa: B010
        return time.perf_counter() - start

    run(False)
    run(True)
    old, new = [], []
    for _ in range(runs):
        old.append(run(False))
        new.append(run(True))
    return {
        "off median": 1000 * float(np.median(old)),
        "on median": 1000 * float(np.median(new)),
        "off fastest": 1000 * float(np.min(old)),
        "on fastest": 1000 * float(np.min(new)),
        "step median": 1000 * float(np.median(np.subtract(new, old))),
    }


def whole_products() -> None:
    print(f"load average (1/5/15 min): {os.getloadavg()}")
    rows = parts_rows()
    print_table(rows, "Multi-part products: IoU and parts kept, before / after the parts step")
    synthetic = [r for r in rows if not str(r["item"]).startswith("coffee")]
    means = {
        k: float(np.mean([float(str(r[k])) for r in synthetic]))
        for v in ("before", "after")
        for k in (f"{v} IoU", f"{v} kept", f"{v} kept, every pixel")
    }
    from multipart import coffee_square

    square = cv2.resize(coffee_square()[0], (1000, 1000), interpolation=cv2.INTER_CUBIC)
    speeds = {
        "coffee at 1 MP (nothing joins)": parts_speed(one_megapixel("coffee")),
        "coffee centre square upscaled to 1 MP (the saucer joins)": parts_speed(
            np.ascontiguousarray(square)
        ),
    }
    print(f"load average (1/5/15 min): {os.getloadavg()}")
    coffee = {str(r["item"]): r for r in rows if str(r["item"]).startswith("coffee")}
    targets = [
        (
            f"multi-part set ({len(synthetic)}) IoU up",
            means["after IoU"] > means["before IoU"],
            f"{means['before IoU']:.4f} -> {means['after IoU']:.4f}",
        ),
        (
            "parts kept up",
            means["after kept"] > means["before kept"],
            f"{means['before kept']:.3f} -> {means['after kept']:.3f} (every pixel of each "
            f"part: {means['before kept, every pixel']:.3f} -> "
            f"{means['after kept, every pixel']:.3f})",
        ),
    ]
    for label, row in coffee.items():
        kept = float(str(row["after kept"]))
        frag = float(str(row["after fragment %"]))
        targets.append(
            (
                f"{label}: saucer >= 90 % opaque",
                kept >= 0.9,
                f"{float(str(row['before kept'])):.3f} -> {kept:.3f}",
            )
        )
        targets.append(
            (
                f"{label}: no detached fragment > 0.5 % of the subject",
                frag <= 0.5,
                f"{float(str(row['before fragment %'])):.2f} % -> {frag:.2f} %",
            )
        )
    for label, ms in speeds.items():
        for stat in ("fastest", "median"):
            old_ms, new_ms = ms[f"off {stat}"], ms[f"on {stat}"]
            targets.append(
                (
                    f"background_removal, {label}, {stat}, within 10 % of before",
                    new_ms <= 1.1 * old_ms,
                    f"{old_ms:.0f} -> {new_ms:.0f} ms ({new_ms / old_ms - 1:+.1%}; {stat} of "
                    f"{PARTS_RUNS}, alternated)",
                )
            )
        step, old_ms = ms["step median"], ms["off median"]
        targets.append(
            (
                f"background_removal, {label}, the step's median cost within 10 %",
                step <= 0.1 * old_ms,
                f"{step:+.1f} ms over {old_ms:.0f} ({step / old_ms:+.1%}; median of "
                f"{PARTS_RUNS} paired differences)",
            )
        )
    print_targets("issue #44 item 3, whole products", targets)


PART_SIDES = tuple(range(300, 1101, 50))
"""Sides (px) coffee's centre square is cut out at by :func:`parts_sizes`."""


def parts_sizes() -> None:
    """The saucer kept (share of it at alpha >= 0.5) in ``background_removal`` of coffee's
    centre square at every side of ``PART_SIDES``: resized straight from the 400 px crop, and
    resized again from the 512 px copy of the set (resampled twice, as a photo that was
    already scaled once). A part the model barely sees joins at some sizes and not at others:
    this is where that shows."""
    from multipart import coffee_saucer, coffee_square

    removal = BackgroundRemovalEngine(MODELS_DIR)
    removal.load()
    saucer = coffee_saucer()[0][:, 100:500].astype(np.uint8)
    photo = np.asarray(data.coffee(), np.uint8)  # type: ignore[no-untyped-call]
    families = {
        "from the 400 px crop": photo[:, 100:500],
        "from the 512 px copy": coffee_square()[0],
    }
    rows, targets = [], []
    for name, source in families.items():
        row: dict[str, object] = {"family": name}
        kept = []
        for side in PART_SIDES:
            image = cv2.resize(source, (side, side), interpolation=cv2.INTER_CUBIC)
            result = removal.run(
                EngineInputs(np.ascontiguousarray(image)), BackgroundRemovalParams()
            )
            alpha = np.asarray(result.images[0].pixels)[..., 3]
            on = cv2.resize(saucer, (side, side), interpolation=cv2.INTER_NEAREST) > 0
            kept.append(float((alpha[on] >= 128).mean()))
            row[str(side)] = f"{kept[-1]:.2f}"
        rows.append(row)
        targets.append(
            (
                f"{name}: saucer >= 90 % kept at every side",
                min(kept) >= 0.9,
                f"{sum(k >= 0.9 for k in kept)} of {len(kept)} sides; lowest {min(kept):.2f}",
            )
        )
    print_table(rows, "coffee's centre square: the saucer kept, by side (px)")
    print_targets("issue #44 item 3, the saucer at every size", targets)


def _option(flag: str) -> str | None:
    return sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv else None


def parts_scenes(folder: Path) -> None:
    """The parts step on scene photos (CBSD68: animals, people, buildings; nothing there is a
    product with parts to join): per photo, the share of pixels whose cut-out (alpha > 0.5)
    the step changes, listed from 0.1 %. ``--save FILE.npz`` keeps the cut-outs and
    ``--against FILE.npz`` compares them with ones kept before (another branch's)."""
    print(f"load average (1/5/15 min): {os.getloadavg()}")
    kept: dict[str, npt.NDArray[np.bool_]] = {}
    saved = _option("--against")
    before = np.load(saved) if saved else None
    rows: list[dict[str, object]] = []
    for path in sorted(folder.glob("*.png")):
        image = np.ascontiguousarray(np.asarray(cv2.imread(str(path)), np.uint8)[..., ::-1])
        on = subject_matte(image, "auto", parts=True).alpha > 0.5
        off = subject_matte(image, "auto", parts=False).alpha > 0.5
        kept[path.stem] = on
        row: dict[str, object] = {
            "photo": path.stem,
            "step changes %": 100 * float((on != off).mean()),
        }
        if before is not None and path.stem in before.files:
            other = before[path.stem]
            row["vs saved %"] = 100 * float((on != other).mean())
            row["gained %"] = 100 * float((on & ~other).mean())
        rows.append(row)
    for key in ("step changes %", "vs saved %"):
        if not any(key in r for r in rows):
            continue
        values = [float(str(r[key])) for r in rows if key in r]
        print(
            f"{key}: {sum(v > 0.1 for v in values)} of {len(values)} photos change by > 0.1 %, "
            f"{sum(v > 1 for v in values)} by > 1 %"
        )
        changed = [r for r in rows if float(str(r.get(key, 0.0))) > 0.1]
        print_table(changed, f"CBSD68 cut-outs changing by > 0.1 % ({key})")
    target = _option("--save")
    if target:
        arrays: dict[str, Any] = dict(kept)
        np.savez_compressed(target, **arrays)
        print(f"wrote {target}")


def parts_shadows() -> None:
    """The parts step on ``multipart.shadowed()`` (products with soft drop and contact shadows on
    plain and gradient backdrops): with the step off and on, the share of the frame opaque
    farther than 4 px from the product, of the shadow opaque, and of the parts kept."""
    from multipart import shadowed

    rows: list[dict[str, object]] = []
    disc = np.ones((9, 9), np.uint8)
    for item in shadowed():
        product = np.logical_or.reduce(item.parts)
        away = cv2.dilate(product.astype(np.uint8), disc) == 0
        row: dict[str, object] = {"item": item.name}
        for version, on in (("off", False), ("on", True)):
            alpha = subject_matte(item.image, "auto", parts=on).alpha
            row[f"{version}: beyond %"] = 100 * float((alpha > 0.5)[away].mean())
            row[f"{version}: shadow %"] = 100 * float((alpha > 0.5)[item.shadow].mean())
            row[f"{version}: kept"] = parts_scores(alpha, item.parts)["kept"]
        rows.append(row)
    changed = [
        r for r in rows if any(r[f"off: {k}"] != r[f"on: {k}"] for k in ("beyond %", "kept"))
    ]
    print_table(changed, f"Shadowed products ({len(rows)}) the parts step changes")
    for key in ("beyond %", "shadow %", "kept"):
        means = [
            float(np.mean([float(str(r[f"{v}: {key}"])) for r in rows])) for v in ("off", "on")
        ]
        print(f"mean {key}: off {means[0]:.4f}, on {means[1]:.4f}")


def regions_speed() -> None:
    """The parts step's six segmentations of a 128 px copy: ``regions.segmentations`` against
    scikit-image's ``felzenszwalb`` called six times (fastest of 15 each; the labels must be
    the same), on scikit-image's photos and the first CBSD68 photos when present."""
    from skimage.segmentation import felzenszwalb

    from pixelmill.engines.background.parts import MIN_REGION, SEGMENTATIONS, _small
    from pixelmill.engines.background.regions import COMPILED, segmentations

    start = time.perf_counter()
    COMPILED.load()
    print(f"load average (1/5/15 min): {os.getloadavg()}")
    print(f"numba import + compile (or cache read): {time.perf_counter() - start:.2f} s")
    photos = {n: photo(n) for n in ("coffee", "astronaut", "chelsea", "rocket")}
    for path in sorted(SHARED_PHOTOS.glob("*.png"))[:6]:
        photos[path.stem] = np.asarray(Image.open(path).convert("RGB"))
    rows: list[dict[str, object]] = []
    for name, image in photos.items():
        small, _ = _small(image, np.zeros(image.shape[:2], np.float32))

        def ours(small: ImageArray = small) -> list[npt.NDArray[np.int32]]:
            return list(segmentations(small, SEGMENTATIONS, MIN_REGION))

        def theirs(small: ImageArray = small) -> list[npt.NDArray[np.int64]]:
            return [
                np.asarray(felzenszwalb(small, scale=scale, sigma=sigma, min_size=MIN_REGION))
                for sigma, scale in SEGMENTATIONS
            ]

        same = all(np.array_equal(a, b) for a, b in zip(ours(), theirs(), strict=True))
        mine, ref = fastest(ours, 15), fastest(theirs, 15)
        rows.append(
            {
                "photo": name,
                "size": f"{small.shape[1]}x{small.shape[0]}",
                "scikit-image ms": round(1000 * ref, 2),
                "regions ms": round(1000 * mine, 2),
                "faster": f"{ref / mine:.1f}x",
                "same labels": same,
            }
        )
    print_table(rows, "Six segmentations of the 128 px copy (fastest of 15)")
    print_targets(
        "the compiled segmentation",
        [
            (
                "same labels as scikit-image",
                all(bool(r["same labels"]) for r in rows),
                f"{len(rows)} photos x {len(SEGMENTATIONS)} segmentations",
            )
        ],
    )


def parts_sheet(path: str) -> None:
    """``docs/cutout-parts.jpg``: coffee (full frame and centre square) and four multi-part
    composites: the input, the cut-out without the parts step and with it, on a checkerboard."""
    from multipart import coffee_square, items

    chosen = items()
    cases = [
        ("coffee (full frame)", photo("coffee")),
        ("coffee (centre square)", coffee_square()[0]),
    ] + [(chosen[i].name[:34], chosen[i].image) for i in (11, 4, 14, 13)]
    groups = []
    for label, image in cases:
        tiles = [_tile(image, label)]
        for version, on in (("before", False), ("after", True)):
            alpha = subject_matte(image, "auto", parts=on).alpha
            rgba = np.dstack([image[..., :3], (alpha * 255 + 0.5).astype(np.uint8)])
            tiles.append(_tile(rgba, version))
        groups.append(_strip(tiles))
    rows = [np.hstack(groups[i : i + 2]) for i in range(0, len(groups), 2)]
    _save_scaled(np.vstack(rows), path, 0.75)


def pockets_sheet(path: str) -> None:
    """``docs/cutout-pockets.jpg``: the loose bag of ``bench/multipart.py`` (brick seen through
    its handle) and coffee: the input, the cut-out with the trimap's pockets left filled and
    opened (``trimap.open_pockets``), on a checkerboard."""
    import pixelmill.engines.background.trimap as trimap_module
    from multipart import items

    real = trimap_module.open_pockets
    bag = {i.name: i for i in items()}["bag+strap (loose, table)"]
    groups = []
    for label, image in (("bag+strap (loose, table)", bag.image), ("coffee", photo("coffee"))):
        tiles = [_tile(image, label)]
        for version, on in (("pockets filled", False), ("pockets opened", True)):
            setattr(trimap_module, "open_pockets", real if on else (lambda s, c, g: s))  # noqa: B010
            try:
                alpha = subject_matte(image, "auto").alpha
            finally:
                setattr(trimap_module, "open_pockets", real)  # noqa: B010
            rgba = np.dstack([image[..., :3], (alpha * 255 + 0.5).astype(np.uint8)])
            tiles.append(_tile(rgba, version))
        groups.append(_strip(tiles))
    _save_scaled(np.vstack(groups), path, 0.6)


# --- The cut-out corpus (issue 62 items 1 and 4): photos with ground-truth masks ------------


def corpus_rows(root: Path, per_half: int, max_side: int) -> list[dict[str, object]]:
    """Every sample of ``bench/corpora/cutout_masks.py``'s corpus under ``root`` (at most
    ``per_half`` per half, spread over the product types), at each framing, with the parts step
    off and on: IoU, thin parts kept and interior partly transparent."""
    from cutout_masks import FRAMINGS, each, frame, samples, scores

    rows: list[dict[str, object]] = []
    for n, sample in enumerate(each(samples(root), per_half)):
        if n % 20 == 0:
            print(f"  {n} photos done", file=sys.stderr, flush=True)
        image, mask = sample.load(max_side)
        for framing in FRAMINGS:
            img, truth = frame(image, mask, framing)
            if truth.sum() < 64:
                continue
            band = guided_radius(*truth.shape)
            row: dict[str, object] = {
                "id": sample.id,
                "half": sample.half,
                "group": sample.group,
                "framing": framing,
            }
            for version, on in (("off", False), ("on", True)):
                alpha = subject_matte(img, "auto", SALIENCY, parts=on).alpha
                for key, value in scores(alpha, truth, band).items():
                    row[f"{key} ({version})"] = value
            rows.append(row)
    return rows


def corpus_summary(rows: list[dict[str, object]], by: tuple[str, ...]) -> list[dict[str, object]]:
    """Means of the scores over the rows sharing the ``by`` columns (NaN scores left out)."""
    keys = [k for k in rows[0] if k not in ("id", "half", "group", "framing")] if rows else []
    groups: dict[tuple[object, ...], list[dict[str, object]]] = {}
    for r in rows:
        groups.setdefault(tuple(r[b] for b in by), []).append(r)
    out: list[dict[str, object]] = []
    for label, members in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        summary: dict[str, object] = dict(zip(by, label, strict=True))
        summary["n"] = len(members)
        for k in keys:
            values = np.array([float(str(m[k])) for m in members], np.float64)
            summary[k] = float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")
        out.append(summary)
    return out


def corpus(root: Path) -> None:
    """``--corpus DIR [--per-half N] [--max-side S]``: both halves, per framing and per
    product type, parts step off and on."""
    per_half = int(_option("--per-half") or 0)
    max_side = int(_option("--max-side") or 640)
    print(f"load average (1/5/15 min): {os.getloadavg()}")
    started = time.perf_counter()
    rows = corpus_rows(root, per_half, max_side)
    if not rows:
        raise SystemExit(f"--corpus {root}: no photo with a mask (docs/corpora-cutouts.md)")
    photos = len({r["id"] for r in rows})
    print(f"{photos} photos ({len(rows)} framings) in {time.perf_counter() - started:.0f} s")
    for half in ("tune", "report"):
        n = len({r["id"] for r in rows if r["half"] == half})
        print(f"{half} half: {n} photos" + ("" if n else " (none: its rows are missing below)"))
    print_table(corpus_summary(rows, ("half", "framing")), "Cut-out corpus: each half, per framing")
    print_table(
        corpus_summary(rows, ("half", "group", "framing")),
        "Cut-out corpus: each half, per product type and framing",
    )
    target = _option("--save")
    if target:
        import json

        Path(target).write_text(json.dumps(rows, default=float, indent=0))
        print(f"wrote {target}")


def framings_rows() -> list[dict[str, object]]:
    """coffee()'s saucer (``multipart.coffee_saucer``) at each framing and size: full frame,
    centre square, and tight crops to the saucer's box (a 10 px margin, and none: the saucer
    touching three sides), at 512 and 1024 px: the saucer's share opaque (alpha >= 0.9), its
    front edge's mean alpha (the lowest 15 % of its rows) and the share of the cup and saucer's
    interior left partly transparent, parts step off and on."""
    from cutout_masks import interior

    from multipart import coffee_saucer

    full = photo("coffee")
    saucer, cup = coffee_saucer()
    rows: list[dict[str, object]] = []
    for label, box in FRAMING_BOXES.items():
        for side in (512, 1024):
            img, s, c = full[box], saucer[box].astype(np.uint8), cup[box].astype(np.uint8)
            h, w = s.shape
            f = side / max(h, w)
            size = (round(w * f), round(h * f))
            img = np.ascontiguousarray(cv2.resize(img, size, interpolation=cv2.INTER_CUBIC))
            sm = cv2.resize(s, size, interpolation=cv2.INTER_NEAREST) > 0
            cm = cv2.resize(c, size, interpolation=cv2.INTER_NEAREST) > 0
            rows_with = np.flatnonzero(sm.any(axis=1))
            front = sm.copy()
            front[: rows_with.max() - int(0.15 * (rows_with.max() - rows_with.min()))] = False
            inner = interior(sm | cm, guided_radius(*sm.shape))
            row: dict[str, object] = {"framing": label, "px": side}
            for version, on in (("off", False), ("on", True)):
                alpha = subject_matte(img, "auto", SALIENCY, parts=on).alpha
                row[f"saucer opaque ({version})"] = float((alpha[sm] >= 0.9).mean())
                row[f"front edge alpha ({version})"] = float(alpha[front].mean())
                semi = (alpha[inner] > 0.02) & (alpha[inner] < 0.98)
                row[f"interior partial % ({version})"] = 100 * float(semi.mean())
            rows.append(row)
    return rows


FRAMING_BOXES = {
    "full": (slice(None), slice(None)),
    "centre square": (slice(None), slice(100, 500)),
    "tight, 10 px margin": (slice(6, 393), slice(73, 484)),
    "tight, no margin": (slice(16, 383), slice(83, 474)),
}
"""coffee()'s framings (rows, columns of the 600 x 400 photo): the tight crops are the
saucer's box (``multipart.coffee_saucer``) with 10 px around it, and without."""


def framings_sheet(path: str) -> None:
    """``docs/cutout-framings.jpg``: coffee() at each framing (512 px): the photo, the alpha
    with the parts step off and on, and the cut-out (step on) on a checkerboard."""
    strips = []
    for label, box in FRAMING_BOXES.items():
        crop = photo("coffee")[box]
        h, w = crop.shape[:2]
        f = 512 / max(h, w)
        size = (round(w * f), round(h * f))
        image = np.ascontiguousarray(
            cv2.resize(crop, size, interpolation=cv2.INTER_CUBIC), dtype=np.uint8
        )
        tiles = [_tile(image, label)]
        for version, on in (("parts step off", False), ("parts step on", True)):
            alpha = subject_matte(image, "auto", SALIENCY, parts=on).alpha
            tiles.append(_tile((alpha * 255 + 0.5).astype(np.uint8), f"alpha, {version}"))
        rgba = np.dstack([image, (alpha * 255 + 0.5).astype(np.uint8)])
        tiles.append(_tile(rgba, "cut-out (default)"))
        strips.append(_strip(tiles))
    _save_scaled(np.vstack(strips), path, 0.6)


def main() -> None:
    folder = _option("--models-dir")
    if folder is not None:
        use_models_dir(Path(folder))
    if "--regions" in sys.argv:
        regions_speed()
        return
    if "--corpus" in sys.argv:
        corpus(Path(str(_option("--corpus"))))
        return
    if "--framings-sheet" in sys.argv:
        framings_sheet(str(_option("--framings-sheet")))
        return
    if "--framings" in sys.argv:
        print_table(framings_rows(), "coffee()'s saucer at each framing, parts step off / on")
        return
    if "--pockets-sheet" in sys.argv:
        pockets_sheet(sys.argv[sys.argv.index("--pockets-sheet") + 1])
        return
    if "--parts-sheet" in sys.argv:
        parts_sheet(sys.argv[sys.argv.index("--parts-sheet") + 1])
        return
    if "--parts-shadows" in sys.argv:
        parts_shadows()
        return
    if "--parts-scenes" in sys.argv:
        folder = _option("--parts-scenes")
        parts_scenes(Path(folder) if folder and not folder.startswith("--") else SHARED_PHOTOS)
        return
    if "--parts-sizes" in sys.argv:
        parts_sizes()
        return
    if "--parts" in sys.argv:
        whole_products()
        return
    if "--sheet" in sys.argv:
        contact_sheet(sys.argv[sys.argv.index("--sheet") + 1])
        return
    if "--ghost-sheet" in sys.argv:
        ghost_sheet(sys.argv[sys.argv.index("--ghost-sheet") + 1])
        return
    if "--ghosts" in sys.argv:
        ghosts()
        return
    rows = option_rows()
    print_table(rows, "background_removal with output controls (fastest of 7 after 1 warm-up)")
    if "--options" in sys.argv:
        return
    print_table(speed_rows(), "Background engines: speed (median of 3 after 1 warm-up)")
    rows = quality_rows()
    print_table(rows, f"Mask IoU against the known shape ({SIZE}x{SIZE} composites)")
    for key in ("u2netp raw IoU", "+guided IoU", "background_removal IoU", "make_transparent IoU"):
        values = [float(str(r[key])) for r in rows]
        print(f"{key}: mean {np.mean(values):.4f}, min {np.min(values):.4f}")


if __name__ == "__main__":
    main()
