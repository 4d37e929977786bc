"""Tests for the ``replace_background`` engine and its prompt parser, on synthetic composites
whose true subject mask is known."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from pydantic import ValidationError

from pixelmill.engines.base import EngineError, EngineInputs
from pixelmill.engines.replace_background import engine as replace_engine
from pixelmill.engines.replace_background.engine import (
    ReplaceBackgroundEngine,
    ReplaceBackgroundParams,
    replace_background,
)
from pixelmill.engines.replace_background.prompt import TwoColourGradient, parse_backdrop_prompt

U8 = npt.NDArray[np.uint8]
F32 = npt.NDArray[np.float32]
BoolMask = npt.NDArray[np.bool_]
H, W = 320, 256


def bottle_photo(background: tuple[int, int, int] = (222, 222, 226)) -> tuple[U8, BoolMask]:
    """A shaded blue bottle standing inside the frame on a plain background; returns the RGB
    image and the true subject mask."""
    m = np.zeros((H, W), np.uint8)
    cv2.ellipse(m, (W // 2, 205), (70, 75), 0, 0, 360, 255, -1, cv2.LINE_AA)
    cv2.rectangle(m, (W // 2 - 18, 60), (W // 2 + 18, 150), 255, -1)
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    light = 0.6 + 0.4 * np.clip(1 - ((xx - 110) ** 2 + (yy - 170) ** 2) / 90.0**2, 0, 1)
    obj = np.array((30, 90, 200), np.float32) * light[..., None]
    a = m.astype(np.float32)[..., None] / 255.0
    bg = np.full((H, W, 3), background, np.float32)
    rgb = (obj * a + bg * (1 - a) + 0.5).astype(np.uint8)
    return rgb, m > 127


def true_alpha(truth: BoolMask) -> F32:
    """The known subject mask as a soft alpha (a 1-px anti-aliased edge)."""
    return np.asarray(cv2.GaussianBlur(truth.astype(np.float32), (0, 0), 0.7), np.float32)


def _compose(image: U8, truth: BoolMask, prompt: str, seed: int = 0) -> U8:
    """The compositor alone, with the known mask (no segmentation model in the loop)."""
    return replace_background(image, true_alpha(truth), parse_backdrop_prompt(prompt), seed)


def _erode(mask: BoolMask, px: int) -> BoolMask:
    k = np.ones((2 * px + 1, 2 * px + 1), np.uint8)
    return cv2.erode(mask.astype(np.uint8), k) > 0


def _run(image: U8, prompt: str, seed: int = 0) -> tuple[U8, dict[str, object]]:
    result = ReplaceBackgroundEngine().run(
        EngineInputs(image), ReplaceBackgroundParams(prompt=prompt, seed=seed)
    )
    assert len(result.images) == 1
    return result.images[0].pixels, result.details


def test_background_changes_and_subject_stays() -> None:
    image, truth = bottle_photo()
    out, details = _run(image, "a marble countertop")
    assert out.shape == image.shape and out.dtype == np.uint8
    diff = np.abs(out.astype(np.int16) - image.astype(np.int16)).mean(axis=2)
    inside = _erode(truth, 4)
    outside = _erode(~truth, 8)
    assert float(diff[outside].mean()) > 20.0
    assert float(diff[inside].mean()) < 12.0
    assert details["backdrop"] == "marble countertop"
    assert details["matched_terms"] == ["marble"]
    assert details["fallback"] is False
    assert "procedural backdrop, no generative model" in str(details["method"])


@pytest.mark.parametrize(
    ("prompt", "colour", "hue_range"),
    [
        ("blue background", "blue", (100, 130)),
        ("a red backdrop", "red", (0, 8)),
        ("green", "green", (45, 80)),
    ],
)
def test_colour_prompt_paints_that_hue(
    prompt: str, colour: str, hue_range: tuple[int, int]
) -> None:
    image, truth = bottle_photo()
    out = _compose(image, truth, prompt)
    request = parse_backdrop_prompt(prompt)
    hsv = cv2.cvtColor(out, cv2.COLOR_RGB2HSV)
    outside = _erode(~truth, 10)
    hue = hsv[..., 0][outside].astype(int)
    sat = hsv[..., 1][outside].astype(int)
    lo, hi = hue_range
    in_range = (hue >= lo) & (hue <= hi)
    if lo == 0:
        in_range |= hue >= 172  # red wraps around
    assert float(in_range.mean()) > 0.9
    assert float(np.median(sat)) > 120
    assert request.matched_terms == [colour]
    assert request.description == f"{colour} solid colour"


def test_old_background_colour_does_not_fringe_the_edges() -> None:
    image, truth = bottle_photo(background=(40, 220, 60))  # a green screen
    out = _compose(image, truth, "white studio")
    ring = _erode(~truth, 1) & ~_erode(~truth, 4)  # 1-4 px outside the true edge
    before = image[ring].astype(np.float32)
    after = out[ring].astype(np.float32)
    green_excess_before = float((before[:, 1] - np.maximum(before[:, 0], before[:, 2])).mean())
    green_excess_after = float((after[:, 1] - np.maximum(after[:, 0], after[:, 2])).mean())
    assert green_excess_before > 100
    assert green_excess_after < 12


def test_contact_shadow_under_a_standing_subject() -> None:
    image, truth = bottle_photo()
    out = _compose(image, truth, "plain white background")
    base = int(np.nonzero(truth.any(axis=1))[0].max())
    cols = np.nonzero(truth[base - 3])[0]
    rows = slice(base + 2, base + 6)
    under = out[rows, cols.min() : cols.max() + 1].astype(np.float32).mean()
    far = out[rows, :20].astype(np.float32).mean()
    assert under < far * 0.85


def test_unknown_words_fall_back_to_a_studio_sweep_and_say_so() -> None:
    image, _ = bottle_photo()
    out, details = _run(image, "zxq plorb")
    assert details["fallback"] is True
    assert details["matched_terms"] == []
    assert "studio sweep" in str(details["backdrop"])
    assert "no backdrop term" in str(details["note"])
    assert out.shape == image.shape


def test_rgba_input_uses_its_own_alpha() -> None:
    image, truth = bottle_photo()
    rgba = np.dstack([image, (truth * 255).astype(np.uint8)])
    out, details = _run(rgba, "sunset")
    assert out.shape == image.shape  # RGB out
    assert "alpha channel" in str(details["method"])
    inside = _erode(truth, 3)
    assert float(np.abs(out[inside].astype(int) - image[inside].astype(int)).mean()) < 14


def test_seed_changes_details_not_the_kind_of_backdrop() -> None:
    image, truth = bottle_photo()
    a = _compose(image, truth, "city lights", seed=1)
    b = _compose(image, truth, "city lights", seed=2)
    c = _compose(image, truth, "city lights", seed=1)
    assert a.tobytes() == c.tobytes()
    assert a.tobytes() != b.tobytes()
    assert parse_backdrop_prompt("city lights").description == "city lights bokeh"


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("a wooden table in a garden", "wooden table"),
        ("sunny beach", "beach sand"),
        ("forest", "garden bokeh"),
        ("night city bokeh", "city lights bokeh"),
        ("concrete wall", "concrete surface"),
        ("clean studio", "studio sweep"),
        ("kitchen", "kitchen counter"),
        ("on velvet", "velvet display"),
        ("sky blue background", "sky blue solid colour"),
        ("navy studio backdrop", "navy studio sweep"),
        ("pink to orange gradient", "pink to orange gradient"),
        ("yellow and purple", "yellow to purple gradient"),
        ("dark moody background", "dark studio sweep"),
    ],
)
def test_prompt_parsing(prompt: str, expected: str) -> None:
    request = parse_backdrop_prompt(prompt)
    assert request.description == expected
    assert not request.fallback


def test_gradient_and_gloss_requests() -> None:
    grad = parse_backdrop_prompt("gradient from teal to coral")
    assert isinstance(grad.painter, TwoColourGradient)
    assert grad.matched_terms == ["gradient", "teal", "coral"]
    rng = np.random.default_rng(0)
    painted = grad.paint(100, 80, rng, 0.6).rgb
    assert painted[0].mean(axis=0)[2] > painted[-1].mean(axis=0)[2]  # teal (top) bluer than coral
    glossy = parse_backdrop_prompt("glossy marble")
    assert glossy.spec.name == "marble countertop" and glossy.reflection >= 0.25
    assert "glossy" in glossy.matched_terms


def test_prompt_is_required() -> None:
    with pytest.raises(ValidationError):
        ReplaceBackgroundParams(prompt="")


def test_large_images_paint_a_reduced_plate_and_keep_the_subject_sharp(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    image, truth = bottle_photo()
    full = _compose(image, truth, "marble countertop")
    monkeypatch.setattr(replace_engine, "WORK_PIXELS", image.shape[0] * image.shape[1] // 4)
    reduced = _compose(image, truth, "marble countertop")
    assert reduced.shape == image.shape
    inside = _erode(truth, 4)
    outside = _erode(~truth, 8)
    # The subject is composited at full resolution either way ...
    assert float(np.abs(reduced[inside].astype(int) - full[inside].astype(int)).max()) <= 2
    # ... and the half-size plate is the same scene, only softer.
    assert float(np.abs(reduced[outside].astype(int) - full[outside].astype(int)).mean()) < 12
    assert float(np.abs(reduced[outside].astype(int) - image[outside].astype(int)).mean()) > 20


def test_an_image_without_a_subject_is_refused() -> None:
    with pytest.raises(EngineError, match="no subject"):
        _run(np.full((160, 160, 3), 128, np.uint8), "beach")
