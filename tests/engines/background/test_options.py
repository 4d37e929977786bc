"""The cut-out output controls (issue 20) on real photos: exact sizes, subject scale and
position, background colours and photos, shadows, the matte alone, formats, presets, subject
types, and the conflicts that are refused before anything runs."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import cv2
import matplotlib
import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image
from pydantic import ValidationError
from skimage import data

from pixelmill.engines.background import (
    BackgroundRemovalEngine,
    BackgroundRemovalParams,
    MakeTransparentEngine,
    MakeTransparentParams,
    subject_matte,
)
from pixelmill.engines.background.canvas import cover
from pixelmill.engines.background.engine import salient_cutout
from pixelmill.engines.base import EngineError, EngineInputs, EngineResult
from pixelmill.engines.replace_background import ReplaceBackgroundEngine, ReplaceBackgroundParams
from pixelmill.engines.runtime.layers import bounding_box
from tests.support.images import product_rgb

Pixels = npt.NDArray[np.uint8]
ENGINE = BackgroundRemovalEngine()


def photo(name: str) -> Pixels:
    return np.ascontiguousarray(getattr(data, name)(), dtype=np.uint8)


@cache
def grace_hopper() -> Pixels:
    """The portrait matplotlib ships (512×600): grey hair, a cap, the US flag behind her."""
    path = Path(matplotlib.get_data_path()) / "sample_data" / "grace_hopper.jpg"
    with Image.open(path) as im:
        return np.ascontiguousarray(im.convert("RGB"), dtype=np.uint8)


def run(image: Pixels, **options: Any) -> EngineResult:
    return ENGINE.run(EngineInputs(image), BackgroundRemovalParams(**options))


def solid_box(alpha: Pixels) -> tuple[int, int, int, int]:
    box = bounding_box(alpha >= 128)
    assert box is not None
    return box


def fill_and_centre(box: tuple[int, int, int, int], w: int, h: int) -> tuple[float, float, float]:
    """How much of the canvas the box fills in its limiting direction, and its centre as
    fractions of the canvas."""
    x, y, bw, bh = box
    return max(bw / w, bh / h), (x + bw / 2) / w, (y + bh / 2) / h


# --- size, scale, position -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "scale"), [("800x800", 0.80), ("900x500", 0.85), ("500x900", 0.60)]
)
def test_exact_size_and_the_subject_fills_the_scale_centred(size: str, scale: float) -> None:
    w, h = (int(v) for v in size.split("x"))
    result = run(photo("coffee"), size=size, scale=f"{scale:.0%}")
    rgba = result.images[0].pixels
    assert rgba.shape == (h, w, 4)
    fill, cx, cy = fill_and_centre(solid_box(rgba[..., 3]), w, h)
    assert abs(fill - scale) <= 0.02
    assert abs(cx - 0.5) <= 0.01 and abs(cy - 0.5) <= 0.01
    assert result.details["width"] == w and result.details["height"] == h
    assert result.details["subject_box"] == list(solid_box(rgba[..., 3]))


def test_position_puts_the_subject_where_asked() -> None:
    rgba = run(photo("coffee"), size="600x600", scale="50%", position="0% 100%").images[0].pixels
    x, y, _, bh = solid_box(rgba[..., 3])
    assert x <= 6 and abs((y + bh) - 600) <= 6  # bottom left
    original = run(photo("coffee"), size="600x400", position="original").images[0].pixels
    # "original" without a scale: the 600×400 photo fits the 600×400 canvas one to one.
    assert np.array_equal(original, salient_cutout(photo("coffee"))[0])


def test_crop_with_a_margin() -> None:
    coffee = photo("coffee")
    plain = run(coffee)
    x, y, bw, bh = plain.details["object_box"]
    tight = run(coffee, crop=True).images[0].pixels
    assert tight.shape[:2] == (bh, bw)
    relative = run(coffee, crop=True, crop_margin="10%").images[0].pixels
    assert relative.shape[:2] == (bh + 2 * round(0.1 * bh), bw + 2 * round(0.1 * bw))
    absolute = run(coffee, crop=True, crop_margin="30px 10px").images[0].pixels
    assert absolute.shape[:2] == (bh + 60, bw + 20)
    # The subject sits inside the margin, and the cropped-away background is transparent.
    sx, sy, _, _ = solid_box(absolute[..., 3])
    assert abs(sx - 10) <= 2 and abs(sy - 30) <= 2
    assert np.array_equal(
        absolute[30 : 30 + bh, 10 : 10 + bw], plain.images[0].pixels[y : y + bh, x : x + bw]
    )


def test_preview_size_is_at_most_a_quarter_megapixel() -> None:
    astronaut = photo("astronaut")
    small = run(astronaut, size="preview", type="object").images[0].pixels
    assert small.shape[0] * small.shape[1] <= 250_000
    assert small.shape[0] == small.shape[1]  # aspect kept
    assert run(photo("coffee"), size="hd").images[0].pixels.shape[:2] == (400, 600)  # under 4 MP


# --- backgrounds, shadows, channels, formats ---------------------------------------------------


@pytest.mark.parametrize(
    ("colour", "rgb"),
    [
        ("#1e90ff", (30, 144, 255)),
        ("1E90FF", (30, 144, 255)),
        ("dodgerblue", (30, 144, 255)),
        ("#fa0", (255, 170, 0)),
    ],
)
def test_corners_equal_bg_color_exactly(colour: str, rgb: tuple[int, int, int]) -> None:
    result = run(photo("coffee"), bg_color=colour, size="640x640", scale="80%")
    pixels = result.images[0].pixels
    assert pixels.shape == (640, 640, 3)
    for corner in (pixels[:10, :10], pixels[:10, -10:], pixels[-10:, :10], pixels[-10:, -10:]):
        assert (corner == rgb).all()
    assert result.images[0].preferred_format == "jpeg"
    assert result.details["background"] == "#{:02x}{:02x}{:02x}".format(*rgb)


def test_background_photo_is_fitted_by_cover() -> None:
    backdrop = photo("chelsea")  # 451×300, a different shape from the canvas
    result = ENGINE.run(
        EngineInputs(photo("coffee"), {"background": backdrop}),
        BackgroundRemovalParams(
            bg_image_url="http://example.com/cat.png", size="500x700", scale="60%"
        ),
    )
    pixels = result.images[0].pixels
    assert pixels.shape == (700, 500, 3)
    expected = cover(backdrop, 500, 700)
    for rows, cols in ((slice(0, 10), slice(0, 10)), (slice(-10, None), slice(-10, None))):
        assert np.array_equal(pixels[rows, cols], expected[rows, cols])
    assert result.details["background"] == "image"
    with pytest.raises(EngineError, match="background image"):
        run(photo("coffee"), bg_image_url="http://example.com/cat.png")  # nothing was read


def test_alpha_channel_is_the_rgba_results_alpha() -> None:
    options: dict[str, Any] = {"size": "600x400", "scale": "75%", "position": "center"}
    rgba = run(photo("coffee"), **options).images[0]
    matte = run(photo("coffee"), channels="alpha", **options).images[0]
    assert matte.pixels.ndim == 2 and matte.pixels.dtype == np.uint8
    assert np.array_equal(matte.pixels, rgba.pixels[..., 3])
    assert matte.preferred_format == "png"


def _bottle_on_white(**options: Any) -> Pixels:
    return (
        run(product_rgb(480, 360), size="600x600", scale="70%", bg_color="white", **options)
        .images[0]
        .pixels
    )


@pytest.mark.parametrize("kind", ["soft", "hard", "floating"])
def test_shadow_darkens_under_the_subject_and_nowhere_else(kind: str) -> None:
    plain = _bottle_on_white()
    shaded = _bottle_on_white(shadow=kind)
    x, y, w, h = bounding_box(np.asarray((plain < 250).any(axis=2))) or (0, 0, 0, 0)
    darker = plain.astype(np.int32).sum(axis=2) - shaded.astype(np.int32).sum(axis=2)
    assert darker.min() >= 0  # a shadow never lightens
    under = darker[y + h : y + h + 25, x : x + w]
    assert under.mean() > 6.0, under.mean()  # visibly darker just below the subject
    # Far from the subject's base the background stays exactly white.
    zone = np.zeros_like(darker, dtype=bool)
    zone[y + h // 3 : y + h + 90, max(0, x - 60) : x + w + 60] = True
    assert (darker[~zone] == 0).all()
    assert (shaded[:10, :10] == 255).all()


def test_shadow_on_a_transparent_result_is_semi_transparent_black() -> None:
    rgba = run(product_rgb(480, 360), size="600x600", scale="70%", shadow="soft").images[0]
    assert rgba.preferred_format == "png"
    pixels = rgba.pixels
    x, y, w, h = solid_box(pixels[..., 3])
    below = pixels[y + h + 2 : y + h + 6, x + w // 4 : x + 3 * w // 4]
    assert 10 < below[..., 3].mean() < 200
    assert (below[..., :3] == 0).all()
    assert (pixels[:20, :20, 3] == 0).all()


@pytest.mark.parametrize(
    ("options", "fmt"),
    [
        ({}, "png"),
        ({"bg_color": "fff"}, "jpeg"),
        ({"format": "webp"}, "webp"),
        ({"format": "jpg"}, "jpeg"),
        ({"format": "png", "bg_color": "fff"}, "png"),
        ({"channels": "alpha"}, "png"),
    ],
)
def test_format_auto_is_png_when_transparent_and_jpeg_when_opaque(
    options: dict[str, Any], fmt: str
) -> None:
    image = run(product_rgb(), **options).images[0]
    assert image.preferred_format == fmt


# --- presets ----------------------------------------------------------------------------------


def test_amazon_preset_is_2000_square_pure_white_with_85_percent_subject() -> None:
    result = run(photo("coffee"), preset="amazon")
    pixels = result.images[0].pixels
    assert pixels.shape == (2000, 2000, 3)
    border = np.concatenate(
        [
            pixels[:40].reshape(-1, 3),
            pixels[-40:].reshape(-1, 3),
            pixels[:, :40].reshape(-1, 3),
            pixels[:, -40:].reshape(-1, 3),
        ]
    )
    assert (border == 255).all()
    # The subject's coverage, recovered from the same layout over black: white - black =
    # 255 · (1 - alpha) at every pixel (a white porcelain rim is subject too).
    on_black = run(photo("coffee"), preset="amazon", bg_color="black").images[0].pixels
    gap = pixels.astype(np.float32).mean(axis=2) - on_black.astype(np.float32).mean(axis=2)
    alpha = np.round(255.0 - gap).astype(np.uint8)
    fill, cx, cy = fill_and_centre(solid_box(alpha), 2000, 2000)
    assert abs(fill - 0.85) <= 0.02 and abs(cx - 0.5) <= 0.01 and abs(cy - 0.5) <= 0.01
    assert abs(fill_and_centre(result.details["subject_box"], 2000, 2000)[0] - 0.85) <= 0.005
    assert result.images[0].preferred_format == "jpeg"
    assert result.details["preset"] == "amazon"


@pytest.mark.parametrize(("preset", "shape"), [("shopify", (2048, 2048)), ("etsy", (1600, 2000))])
def test_other_presets_and_explicit_overrides(preset: str, shape: tuple[int, int]) -> None:
    product = product_rgb()
    assert run(product, preset=preset).images[0].pixels.shape == (*shape, 3)
    custom = run(product, preset=preset, size="400x300", bg_color="#f5f5f5").images[0].pixels
    assert custom.shape == (300, 400, 3)
    assert (custom[:5, :5] == 245).all()


# --- subject types ------------------------------------------------------------------------------

HEAD_SIDES = (
    # Grace Hopper's grey hair and ears at both sides of her face, between the cap and the
    # jaw; on the left they border the white stripe of the flag (drawn on a 4× zoom).
    [
        (162, 150),
        (183, 150),
        (178, 200),
        (180, 240),
        (188, 280),
        (184, 298),
        (165, 298),
        (160, 270),
        (158, 230),
        (158, 190),
    ],
    [
        (340, 150),
        (362, 150),
        (368, 200),
        (368, 250),
        (362, 290),
        (352, 298),
        (345, 270),
        (345, 200),
    ],
)


def test_person_type_keeps_more_of_the_hair_than_the_salient_mask() -> None:
    portrait = np.ascontiguousarray(grace_hopper()[:380])  # head and shoulders
    sides = np.zeros(portrait.shape[:2], np.uint8)
    cv2.fillPoly(sides, [np.array(p, np.int32) for p in HEAD_SIDES], 1)
    inside = sides.astype(bool)
    salient = subject_matte(portrait, "object")
    person = subject_matte(portrait, "person")
    kept_salient = float(salient.alpha[inside].mean())
    kept_person = float(person.alpha[inside].mean())
    # Measured: mean alpha 0.877 (salient) -> 0.891 (person), pixels kept (alpha >= 0.5)
    # 88.1 % -> 89.6 %: grey hair against the white flag stripe. A small gain: U²-Net-p
    # already keeps most of this portrait (and all of the astronaut's hair, below).
    assert kept_person >= kept_salient + 0.01, (kept_salient, kept_person)
    assert person.detected == "person" and person.faces == 1
    assert subject_matte(portrait, "auto").detected == "person"


def test_person_type_on_the_astronaut_keeps_all_the_hair() -> None:
    astronaut = photo("astronaut")
    hsv = cv2.cvtColor(astronaut, cv2.COLOR_RGB2HSV)
    hair = np.zeros(astronaut.shape[:2], bool)
    head = (slice(0, 150), slice(160, 300))  # brown hair against the pale studio backdrop
    hair[head] = (hsv[head][..., 1] > 70) & (hsv[head][..., 2] < 230)
    assert hair.sum() > 10_000
    for kind in ("object", "person"):
        assert float(subject_matte(astronaut, kind).alpha[hair].mean()) >= 0.99
    result = run(astronaut)
    assert result.details["detected_type"] == "person" and result.details["faces"] == 1


def test_auto_on_a_product_is_the_plain_salient_cutout() -> None:
    coffee = photo("coffee")
    result = run(coffee)
    assert result.details["detected_type"] == "object" and result.details["faces"] == 0
    assert np.array_equal(result.images[0].pixels, salient_cutout(coffee)[0])


def test_product_type_keeps_the_single_main_object() -> None:
    scene = product_rgb(480, 320).copy()
    cv2.rectangle(scene, (390, 200), (440, 280), (230, 130, 40), -1)  # a second, smaller box
    anything = run(scene, type="object").images[0].pixels
    product = run(scene, type="product")
    assert anything[230:270, 400:430, 3].min() == 255
    assert product.images[0].pixels[230:270, 400:430, 3].max() == 0
    assert product.images[0].pixels[120:250, 200:280, 3].min() == 255
    assert product.details["detected_type"] == "product"


# --- parameters and conflicts -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"channels": "alpha", "bg_color": "fff"}, "bg_color"),
        ({"channels": "alpha", "preset": "amazon"}, "preset"),
        ({"channels": "alpha", "shadow": "soft"}, "shadow"),
        ({"channels": "alpha", "format": "jpg"}, "format=jpg"),
        ({"bg_color": "fff", "bg_image_url": "http://example.com/a.png"}, "bg_image_url"),
        ({"shadow": "hard", "add_shadow": False}, "add_shadow=false"),
        ({"crop": True, "crop_to_object": True}, "crop_to_object"),
    ],
)
def test_conflicting_options_are_refused_by_validate(options: dict[str, Any], named: str) -> None:
    with pytest.raises(EngineError) as err:
        ENGINE.validate(BackgroundRemovalParams(**options))
    assert named in str(err.value)


@pytest.mark.parametrize(
    "options",
    [
        {"size": "12x"},
        {"size": "8x100"},
        {"size": "9000x9000"},
        {"size": "huge"},
        {"scale": "5%"},
        {"scale": "150%"},
        {"scale": "big"},
        {"position": "left"},
        {"position": "120% 0%"},
        {"bg_color": "notacolour"},
        {"bg_color": "#12345"},
        {"crop_margin": "60%"},
        {"crop_margin": "1px 2px 3px 4px 5px"},
        {"preset": "ebay"},
        {"type": "animal"},
        {"quality": 0},
    ],
)
def test_malformed_options_are_validation_errors(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        BackgroundRemovalParams(**options)


def test_option_spellings() -> None:
    params = BackgroundRemovalParams(
        size="2000X2000", scale="85%", position="Centre", bg_color="#FFF"
    )
    assert params.size == "2000x2000" and params.position == "centre" and params.bg_color == "#fff"
    ENGINE.validate(BackgroundRemovalParams(crop_margin="10% 30px"))


# --- the other engines ---------------------------------------------------------------------------


def test_make_transparent_takes_the_transparent_options() -> None:
    logo = np.full((240, 360, 3), 255, np.uint8)
    cv2.putText(
        logo, "LOGO", (20, 140), cv2.FONT_HERSHEY_DUPLEX, 2.8, (200, 30, 40), 10, cv2.LINE_AA
    )
    engine = MakeTransparentEngine()
    cropped = engine.run(EngineInputs(logo), MakeTransparentParams(crop=True, channels="alpha"))
    matte = cropped.images[0].pixels
    assert matte.ndim == 2 and matte.shape[0] < 140 and matte.shape[1] < 340
    assert cropped.details["method"].startswith("colour key")
    squared = engine.run(EngineInputs(logo), MakeTransparentParams(size="500x500", scale="90%"))
    fill, cx, _ = fill_and_centre(solid_box(squared.images[0].pixels[..., 3]), 500, 500)
    assert abs(fill - 0.9) <= 0.02 and abs(cx - 0.5) <= 0.01
    with pytest.raises(EngineError, match="channels=alpha"):
        engine.validate(MakeTransparentParams(channels="alpha", shadow="soft"))
    assert "bg_color" not in MakeTransparentParams.model_fields


def test_replace_background_takes_the_subject_type_and_format() -> None:
    engine = ReplaceBackgroundEngine()
    astronaut = np.asarray(
        cv2.resize(photo("astronaut"), (256, 256), interpolation=cv2.INTER_AREA), np.uint8
    )
    person = engine.run(
        EngineInputs(astronaut),
        ReplaceBackgroundParams(prompt="white studio", type="person", format="jpg"),
    )
    assert "MediaPipe" in person.details["method"]
    assert person.images[0].preferred_format == "jpeg"
    plain = engine.run(EngineInputs(astronaut), ReplaceBackgroundParams(prompt="white studio"))
    assert plain.images[0].preferred_format is None  # the input's format, as before
