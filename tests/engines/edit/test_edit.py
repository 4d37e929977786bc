"""Tests for the edit prompt interpreter and the ``edit`` engine: what prompts mean, and that
each edit measurably does what it says, scaled by strength."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from pydantic import ValidationError
from skimage import data

from pixelmill.engines.base import EngineError, EngineInputs
from pixelmill.engines.edit import adjust
from pixelmill.engines.edit.engine import EditEngine, EditParams, map_strips
from pixelmill.engines.edit.grammar import EXAMPLES, PromptNotUnderstood, interpret
from pixelmill.engines.runtime.layers import STRIP_PIXELS, to_float, to_uint8_rounded

U8 = npt.NDArray[np.uint8]
BoolMask = npt.NDArray[np.bool_]
H, W = 288, 224


def sample(name: str) -> U8:
    """A scikit-image sample photo (bundled, offline)."""
    return np.ascontiguousarray(getattr(data, name)(), dtype=np.uint8)


def photo() -> U8:
    """A real photo (scikit-image's cat), reduced to keep the tests fast."""
    cat = np.ascontiguousarray(sample("chelsea"), dtype=np.uint8)
    return np.asarray(cv2.resize(cat, (226, 150), interpolation=cv2.INTER_AREA), np.uint8)


def bottle_on_bricks() -> tuple[U8, BoolMask]:
    """A shaded, light-grey bottle standing on a sharp brick texture; returns RGB and the
    true subject mask."""
    m = np.zeros((H, W), np.uint8)
    cv2.ellipse(m, (W // 2, 190), (62, 70), 0, 0, 360, 255, -1, cv2.LINE_AA)
    cv2.rectangle(m, (W // 2 - 16, 55), (W // 2 + 16, 140), 255, -1)
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    light = 0.55 + 0.45 * np.clip(1 - ((xx - 95) ** 2 + (yy - 160) ** 2) / 85.0**2, 0, 1)
    obj = np.array((200, 200, 205), np.float32) * light[..., None]
    brick = cv2.resize(np.asarray(sample("brick"), np.uint8), (W, H), interpolation=cv2.INTER_AREA)
    bg = brick.astype(np.float32)[..., None] * np.array((0.9, 0.75, 0.6), np.float32)
    a = m.astype(np.float32)[..., None] / 255.0
    return (obj * a + bg * (1 - a) + 0.5).astype(np.uint8), m > 127


def with_known_alpha(image: U8, truth: BoolMask) -> U8:
    """``image`` as RGBA with the true subject mask as its alpha: the engine then uses that
    alpha instead of running the segmentation model (and keeps it in the output)."""
    return np.ascontiguousarray(np.dstack([image, (truth * 255).astype(np.uint8)]))


def _erode(mask: BoolMask, px: int) -> BoolMask:
    return cv2.erode(mask.astype(np.uint8), np.ones((2 * px + 1, 2 * px + 1), np.uint8)) > 0


def edit(image: U8, prompt: str, strength: float = 0.75) -> tuple[U8, dict[str, object]]:
    result = EditEngine().run(EngineInputs(image), EditParams(prompt=prompt, strength=strength))
    assert len(result.images) == 1
    return result.images[0].pixels, result.details


def _mad(a: U8, b: U8) -> float:
    return float(np.abs(a[..., :3].astype(np.int16) - b[..., :3].astype(np.int16)).mean())


# --- the interpreter -------------------------------------------------------------------------

INTERPRETATIONS: list[tuple[str, list[tuple[str, object]]]] = [
    ("replace the background with a marble countertop",
     [("replace_background", "marble countertop")]),
    ("change the background to a sunset and make it warmer",
     [("replace_background", "sunset"), ("warmth", 1.0)]),
    ("put it on a beach with sand and palm trees",
     [("replace_background", "beach with sand and palm trees")]),
    ("make the background blue", [("replace_background", "blue")]),
    ("sunset background", [("replace_background", "sunset")]),
    ("remove the background", [("remove_background", None)]),
    ("make the background transparent", [("remove_background", None)]),
    ("blur the background", [("blur_background", 1.0)]),
    ("portrait mode", [("blur_background", 1.0)]),
    ("make the background blurry", [("blur_background", 1.0)]),
    ("make the car red", [("recolor", ("red", "car"))]),
    ("change the color of the shirt to light blue", [("recolor", ("light blue", "shirt"))]),
    ("make it red", [("recolor", ("red", None))]),
    ("turn the photo blue", [("recolor", ("blue", "image"))]),
    ("make it warmer", [("warmth", 1.0)]),
    ("make it a bit cooler", [("warmth", -0.5)]),
    ("very warm", [("warmth", 1.5)]),
    ("brighter and more contrast", [("brightness", 1.0), ("contrast", 1.0)]),
    ("lower the brightness", [("brightness", -1.0)]),
    ("less contrast", [("contrast", -1.0)]),
    ("more contrast, slightly more saturated", [("contrast", 1.0), ("saturation", 0.5)]),
    ("desaturate", [("saturation", -1.0)]),
    ("make the background darker", [("brightness", -1.0)]),
    ("black and white", [("monochrome", 1.0)]),
    ("make the image b&w", [("monochrome", 1.0)]),
    ("sepia", [("sepia", 1.0)]),
    ("turn it into an oil painting", [("style", "oil_painting")]),
    ("anime style", [("style", "anime")]),
    ("make it look like a watercolour painting, then add a vignette",
     [("style", "watercolor"), ("vignette", 1.0)]),
    ("give it a vintage look", [("style", "vintage")]),
    ("teal and orange film look", [("style", "cinematic")]),
    ("pencil sketch", [("style", "sketch")]),
    ("sharpen", [("sharpen", 1.0)]),
    ("blur the image", [("sharpen", -1.0)]),
]  # fmt: skip


@pytest.mark.parametrize(("prompt", "expected"), INTERPRETATIONS)
def test_interpret(prompt: str, expected: list[tuple[str, object]]) -> None:
    steps = interpret(prompt)
    got: list[tuple[str, object]] = []
    for step in steps:
        if step.kind in ("replace_background", "style"):
            got.append((step.kind, step.value))
        elif step.kind == "remove_background":
            got.append((step.kind, None))
        elif step.kind == "recolor":
            got.append((step.kind, (step.value, step.target)))
        else:
            got.append((step.kind, step.amount))
    assert got == expected
    assert all(s.description for s in steps)


def test_interpret_regions_and_descriptions() -> None:
    (dark_bg,) = interpret("make the background darker")
    assert dark_bg.region == "background"
    assert dark_bg.description == "make the background darker"
    (replace,) = interpret("replace the background with a marble countertop")
    assert "marble countertop" in replace.description
    (subject,) = interpret("brighten the product")
    assert subject.region == "subject" and subject.amount > 0


@pytest.mark.parametrize("prompt", ["asdf qwerty", "make it better", "hello", "   "])
def test_unrecognisable_prompts_are_rejected_with_examples(prompt: str) -> None:
    with pytest.raises(PromptNotUnderstood) as info:
        interpret(prompt)
    assert EXAMPLES[0] in str(info.value)
    engine = EditEngine()
    params = EditParams(prompt=prompt)
    with pytest.raises(EngineError, match="not understood"):
        engine.validate(params)
    with pytest.raises(EngineError, match="not understood"):
        engine.run(EngineInputs(photo()), params)


def test_params_bounds() -> None:
    with pytest.raises(ValidationError):
        EditParams(prompt="sepia", strength=1.5)
    with pytest.raises(ValidationError):
        EditParams(prompt="")
    assert EditParams(prompt="sepia").strength == 0.75


# --- the edits -------------------------------------------------------------------------------


def test_warmer_raises_red_minus_blue_and_cooler_lowers_it() -> None:
    image = photo()

    def r_minus_b(img: U8) -> float:
        return float(img[..., 0].astype(np.float32).mean() - img[..., 2].astype(np.float32).mean())

    warm, details = edit(image, "make it warmer")
    cool, _ = edit(image, "make it cooler")
    assert r_minus_b(warm) > r_minus_b(image) + 8
    assert r_minus_b(cool) < r_minus_b(image) - 8
    assert details["interpreted_as"] == ["make it warmer"]
    assert warm.shape == image.shape  # RGB in, RGB out


def test_black_and_white_has_no_chroma() -> None:
    image = photo()
    out, details = edit(image, "black and white")
    px = out.astype(np.int16)
    chroma = np.maximum(np.abs(px[..., 0] - px[..., 1]), np.abs(px[..., 1] - px[..., 2]))
    assert int(chroma.max()) <= 1
    assert float(out.std()) > 20  # not a flat grey
    assert details["interpreted_as"] == ["black and white"]


@pytest.mark.parametrize(
    "prompt", ["make it warmer", "black and white", "more contrast", "sepia", "oil painting"]
)
def test_lower_strength_changes_less(prompt: str) -> None:
    image = photo()
    weak, _ = edit(image, prompt, strength=0.25)
    strong, _ = edit(image, prompt, strength=1.0)
    zero, _ = edit(image, prompt, strength=0.0)
    assert _mad(weak, image) < 0.6 * _mad(strong, image)
    assert _mad(zero, image) < 0.6


def test_style_step_uses_the_style_filters() -> None:
    image = photo()
    out, details = edit(image, "turn it into a pencil sketch")
    assert details["steps"] == ["style"]
    assert "style_transfer filters (sketch)" in str(details["method"])
    # A pencil sketch is (near) colourless and different from the photo.
    px = out.astype(np.int16)
    assert float(np.abs(px[..., 0] - px[..., 2]).mean()) < 6
    assert _mad(out, image) > 15


def test_remove_background_gives_rgba_matching_the_subject() -> None:
    image, truth = bottle_on_bricks()
    out, details = edit(image, "remove the background")
    assert out.shape == (H, W, 4)
    solid = out[..., 3] > 127
    iou = float((solid & truth).sum()) / float((solid | truth).sum())
    assert iou > 0.85
    assert details["has_alpha"] is True


def test_blur_background_keeps_the_subject_sharp() -> None:
    image, truth = bottle_on_bricks()
    out, details = edit(with_known_alpha(image, truth), "blur the background")
    assert out.shape == (H, W, 4)  # an RGBA cut-out stays one
    assert details["mask"] == "the image's alpha"
    out = np.ascontiguousarray(out[..., :3])

    def detail(img: U8, where: BoolMask) -> float:
        gray = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY).astype(np.float32)
        return float(np.abs(cv2.Laplacian(gray, cv2.CV_32F))[where].mean())

    bg = _erode(~truth, 12)
    inside = _erode(truth, 6)
    assert detail(out, bg) < 0.35 * detail(image, bg)
    assert _mad(out[inside], image[inside]) < 4


def test_recolour_the_main_object_keeps_shading_and_background() -> None:
    image, truth = bottle_on_bricks()
    out, details = edit(with_known_alpha(image, truth), "make the bottle red")
    out = np.ascontiguousarray(out[..., :3])
    inside = _erode(truth, 5)
    outside = _erode(~truth, 8)
    hsv = cv2.cvtColor(out, cv2.COLOR_RGB2HSV)
    hue = hsv[..., 0][inside].astype(int)
    assert float(((hue <= 8) | (hue >= 172)).mean()) > 0.9
    assert float(np.median(hsv[..., 1][inside])) > 100
    lab_in = cv2.cvtColor(image, cv2.COLOR_RGB2LAB)[..., 0][inside].astype(np.float64)
    lab_out = cv2.cvtColor(out, cv2.COLOR_RGB2LAB)[..., 0][inside].astype(np.float64)
    assert float(np.corrcoef(lab_in, lab_out)[0, 1]) > 0.9  # the shading survives
    assert _mad(out[outside], image[outside]) < 3
    assert details["interpreted_as"] == [
        "recolour the bottle red (the main object's dominant colour)"
    ]


def test_background_only_adjustment() -> None:
    image, truth = bottle_on_bricks()
    out, _ = edit(with_known_alpha(image, truth), "make the background darker")
    out = np.ascontiguousarray(out[..., :3])
    bg = _erode(~truth, 10)
    inside = _erode(truth, 6)
    assert out[bg].mean() < image[bg].mean() - 15
    assert _mad(out[inside], image[inside]) < 4


def test_replace_background_through_edit() -> None:
    image, truth = bottle_on_bricks()
    out, details = edit(image, "replace the background with a blue background and sharpen")
    assert out.shape == image.shape
    bg = _erode(~truth, 10)
    hsv = cv2.cvtColor(out, cv2.COLOR_RGB2HSV)
    hue = hsv[..., 0][bg].astype(int)
    assert float(((hue >= 100) & (hue <= 130)).mean()) > 0.9
    assert details["steps"] == ["replace_background", "sharpen"]
    assert "procedural backdrop" in str(details["method"])


def test_strip_processing_matches_whole_image_processing() -> None:
    """Steps run strip by strip on large images; the strips must not show (no seams)."""
    big: U8 = np.asarray(
        cv2.resize(sample("astronaut"), (1200, 1000), interpolation=cv2.INTER_CUBIC), np.uint8
    )
    assert big.shape[0] * big.shape[1] > STRIP_PIXELS  # at least two strips
    sigma = adjust.sharpen_sigma(1000, 1200)
    margin = adjust.sharpen_reach(sigma, 1.0)
    whole = to_uint8_rounded(adjust.sharpen(to_float(big), 1.0, sigma))
    strips = map_strips(big, lambda x, _: adjust.sharpen(x, 1.0, sigma), margin=margin)
    assert int(np.abs(whole.astype(int) - strips.astype(int)).max()) <= 1
    whole_v = to_uint8_rounded(adjust.vignette(to_float(big), 1.0))
    strips_v = map_strips(big, lambda x, top: adjust.vignette(x, 1.0, top, 1000))
    assert int(np.abs(whole_v.astype(int) - strips_v.astype(int)).max()) <= 1


def test_mask_steps_need_a_subject() -> None:
    flat = np.full((160, 160, 3), 128, np.uint8)
    with pytest.raises(EngineError, match="no main subject"):
        edit(flat, "remove the background")
    out, _ = edit(flat, "make it warmer")  # no mask needed: fine on any image
    assert out.shape == flat.shape
