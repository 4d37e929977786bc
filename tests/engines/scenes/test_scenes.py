"""Tests for the procedural scene compositor and the ``scenes`` engine: determinism, distinct
scenes, product pixels kept, shadows and reflections where they belong, category-aware choice,
edge decontamination."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from pydantic import ValidationError

from pixelmill.engines.base import EngineError, EngineInputs, MultiImageEngine
from pixelmill.engines.runtime.backdrops import studio_sweep
from pixelmill.engines.runtime.layers import (
    crop_cutout,
    decontaminate,
    fit_box,
    has_meaningful_alpha,
    layer_from_cutout,
    prepare_cutout,
)
from pixelmill.engines.runtime.scenery import (
    CATEGORIES,
    SCENES,
    choose_scenes,
    composite,
    render_backdrop,
    render_scene,
    scene_spec,
)
from pixelmill.engines.scenes import ScenesEngine, ScenesParams

U8 = npt.NDArray[np.uint8]
F32 = npt.NDArray[np.float32]
SIZE = 320
BLUE = (30, 90, 200)


def bottle_cutout(h: int = 240, w: int = 160) -> U8:
    """A shaded blue bottle (body + neck) on a transparent background."""
    m = np.zeros((h, w), np.uint8)
    cv2.ellipse(
        m, (w // 2, int(h * 0.62)), (int(w * 0.4), int(h * 0.32)), 0, 0, 360, 255, -1, cv2.LINE_AA
    )
    cv2.rectangle(m, (int(w * 0.4), int(h * 0.1)), (int(w * 0.6), int(h * 0.4)), 255, -1)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    light = 0.6 + 0.4 * np.clip(
        1 - ((xx - w * 0.4) ** 2 + (yy - h * 0.5) ** 2) / (0.5 * w) ** 2, 0, 1
    )
    rgb = (np.array(BLUE, np.float32) * light[..., None]).astype(np.uint8)
    return np.ascontiguousarray(np.dstack([rgb, m]))


def block_cutout(colour: tuple[int, int, int] = (200, 70, 40)) -> U8:
    """A flat-coloured, fully opaque 100×60 block inside a transparent 140×100 canvas."""
    rgba = np.zeros((140, 100, 4), np.uint8)
    rgba[20:120, 20:80, :3] = colour
    rgba[20:120, 20:80, 3] = 255
    return rgba


def placed_box(cutout: U8, scene: str, size: int = SIZE) -> tuple[int, int, int, int]:
    spec = scene_spec(scene)
    sub = crop_cutout(cutout)
    return fit_box(sub.shape[:2], (size, size), height=spec.height, base=spec.base)


def test_render_is_deterministic_for_a_seed() -> None:
    cut = bottle_cutout()
    for scene in ("marble countertop", "city lights bokeh", "linen flat lay"):
        a = render_scene(cut, scene, seed=7, size=SIZE)
        b = render_scene(cut, scene, seed=7, size=SIZE)
        assert a.tobytes() == b.tobytes()
        assert a.shape == (SIZE, SIZE, 3) and a.dtype == np.uint8
    other_seed = render_scene(cut, "marble countertop", seed=8, size=SIZE)
    same_seed = render_scene(cut, "marble countertop", seed=7, size=SIZE)
    assert np.abs(other_seed.astype(int) - same_seed.astype(int)).mean() > 1.0


def test_every_scene_renders_and_scenes_differ() -> None:
    cut = bottle_cutout()
    images = {name: render_scene(cut, name, 0, 192).astype(np.int16) for name in SCENES}
    names = list(images)
    for i, a in enumerate(names):
        img = images[a]
        assert img.shape == (192, 192, 3)
        assert float(img.std()) > 3.0, f"{a} is flat"
        for b in names[i + 1 :]:
            diff = float(np.abs(img - images[b]).mean())
            assert diff > 4.0, f"{a} and {b} look the same (mean diff {diff:.1f})"


def test_opaque_product_pixels_are_preserved() -> None:
    cut = block_cutout()
    scene = "white studio sweep"
    x, y, w, h = placed_box(cut, scene)
    # Exact without harmonisation (only the dither's ±1 remains) ...
    spec = scene_spec(scene)
    backdrop = render_backdrop(scene, 0, SIZE)
    layer = layer_from_cutout(crop_cutout(cut), (x, y, w, h))
    raw = composite(backdrop, layer, shadow=spec.shadow, harmonise_amount=0.0)
    inner = raw[y + 3 : y + h - 3, x + 3 : x + w - 3] * 255.0
    assert np.abs(inner - np.array((200, 70, 40), np.float32)).max() < 0.6
    # ... and within the harmoniser's small, bounded shift in the rendered scene.
    img = render_scene(cut, scene, 0, SIZE)
    inner8 = img[y + 3 : y + h - 3, x + 3 : x + w - 3].reshape(-1, 3).astype(np.float32)
    mean = inner8.mean(axis=0)
    assert np.all(np.abs(mean - np.array((200, 70, 40))) <= np.array((200, 70, 40)) * 0.08 + 3)
    assert float(inner8.std(axis=0).max()) < 2.0  # flat stays flat: no texture leaks in


@pytest.mark.parametrize("scene", ["white studio sweep", "wooden table", "beach sand"])
def test_contact_shadow_is_darker_under_the_object_than_far_away(scene: str) -> None:
    cut = bottle_cutout()
    x, y, w, h = placed_box(cut, scene)
    base = y + h
    img = render_scene(cut, scene, 3, SIZE).astype(np.float32)
    empty = render_backdrop(scene, 3, SIZE).rgb * 255.0
    rows = slice(base + 1, base + max(3, SIZE // 60))
    under = slice(x + w // 4, x + 3 * w // 4)
    far = slice(0, SIZE // 12)
    ratio_under = img[rows, under].mean() / empty[rows, under].mean()
    ratio_far = img[rows, far].mean() / empty[rows, far].mean()
    assert ratio_under < 0.85, ratio_under
    assert 0.97 < ratio_far < 1.03, ratio_far


def test_gloss_floor_reflects_the_product() -> None:
    cut = bottle_cutout()
    scene = "black gloss surface"
    x, y, w, h = placed_box(cut, scene)
    base = y + h
    img = render_scene(cut, scene, 0, SIZE).astype(np.float32)
    empty = render_backdrop(scene, 0, SIZE).rgb * 255.0
    below = (slice(base + 2, base + h // 8), slice(x + w // 3, x + 2 * w // 3))
    blue_gain = float((img[below][..., 2] - img[below][..., 0]).mean())
    blue_before = float((empty[below][..., 2] - empty[below][..., 0]).mean())
    assert blue_gain > blue_before + 10.0


def test_choice_depends_on_category_and_is_stable() -> None:
    jewelry = choose_scenes("jewelry", 4)
    furniture = choose_scenes("furniture", 4)
    assert jewelry != furniture
    assert jewelry[0] == "velvet display"
    assert "living room" in furniture
    for category in CATEGORIES:
        full = choose_scenes(category, 12, seed=5)
        assert len(set(full)) == 12
        assert choose_scenes(category, 3, seed=5) == full[:3]
        assert full[0] == CATEGORIES[category][0]
        assert set(full[: len(CATEGORIES[category])]) == set(CATEGORIES[category])
    assert choose_scenes("Unknown-thing", 3) == choose_scenes("other", 3)
    assert any(choose_scenes("food", 8, s) != choose_scenes("food", 8, 0) for s in range(1, 4))


def test_decontamination_removes_the_old_background_colour() -> None:
    h = w = 96
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    d = np.sqrt((xx - 48) ** 2 + (yy - 48) ** 2)
    alpha = np.clip((30.0 - d) / 6.0, 0.0, 1.0).astype(np.float32)  # 6 px soft edge
    fg = np.array((0.9, 0.1, 0.1), np.float32)
    bg = np.array((0.1, 0.8, 0.1), np.float32)
    observed = (alpha[..., None] * fg + (1 - alpha[..., None]) * bg).astype(np.float32)
    band = (alpha > 0.25) & (alpha < 0.75)
    cleaned = decontaminate(observed, alpha)
    assert float(observed[band][:, 1].mean()) > 0.3
    assert float(np.abs(cleaned[band] - fg).max()) < 0.08
    assert np.array_equal(cleaned[alpha >= 0.99], observed[alpha >= 0.99])


def test_studio_sweep_has_no_hard_horizon_line() -> None:
    rng = np.random.default_rng(0)
    sweep = studio_sweep(400, 400, rng, horizon=0.6, color=None).rgb[..., 1]
    column = sweep[:, 200].astype(np.float64)
    assert float(np.abs(np.diff(column)).max()) < 0.01  # seamless: no step anywhere


def test_meaningful_alpha() -> None:
    cut = bottle_cutout()
    assert has_meaningful_alpha(cut)
    opaque = cut.copy()
    opaque[..., 3] = 255
    assert not has_meaningful_alpha(opaque)
    assert not has_meaningful_alpha(cut[..., :3])


def test_engine_on_a_cutout() -> None:
    engine = ScenesEngine()
    params = ScenesParams(num_scenes=3, category="jewelry", seed=2, size=256)
    result = engine.run(EngineInputs(bottle_cutout()), params)
    again = engine.run(EngineInputs(bottle_cutout()), params)
    assert [i.label for i in result.images] == result.details["scenes"]
    assert result.details["scenes"] == choose_scenes("jewelry", 3, 2)
    assert len(set(result.details["scenes"])) == 3
    assert "procedural backdrop, no generative model" in result.details["method"]
    assert "alpha channel" in result.details["method"]
    for a, b in zip(result.images, again.images, strict=True):
        assert a.pixels.shape == (256, 256, 3)
        assert a.pixels.tobytes() == b.pixels.tobytes()
    # Scene i rendered on its own matches scene i of the batch (the job runner relies on it).
    single = render_scene(bottle_cutout(), result.details["scenes"][1], 2, 256)
    assert single.tobytes() == result.images[1].pixels.tobytes()


def test_engine_cuts_out_an_rgb_product_photo() -> None:
    h, w = 300, 240
    photo = np.full((h, w, 3), (226, 224, 220), np.uint8)
    cut = bottle_cutout(200, 130)
    a = cut[..., 3:].astype(np.float32) / 255.0
    region = photo[60:260, 55:185].astype(np.float32)
    photo[60:260, 55:185] = (cut[..., :3] * a + region * (1 - a) + 0.5).astype(np.uint8)
    result = ScenesEngine().run(
        EngineInputs(photo), ScenesParams(num_scenes=2, category="food", size=256)
    )
    assert "U²-Net-p" in result.details["method"]
    for image in result.images:
        px = image.pixels.reshape(-1, 3).astype(int)
        blue = (px[:, 2] > px[:, 0] + 80) & (px[:, 2] > 120)
        assert 0.04 < blue.mean() < 0.5  # the blue bottle is there, and not the whole frame


def test_planned_scenes_render_on_demand_as_render_scene_does() -> None:
    """The job runner's path: ``plan`` once, then each scene's ``render()`` on its own, in any
    order, gives the pixels of ``render_scene`` and of a whole ``run``."""
    engine: MultiImageEngine = ScenesEngine()
    engine.load()
    image = bottle_cutout()
    params = ScenesParams(num_scenes=3, category=" Jewelry ", seed=2**31 - 5, size=256)
    planned = engine.plan(EngineInputs(image), params)
    names = choose_scenes("jewelry", 3, 2**31 - 5)
    assert [p.position for p in planned] == [0, 1, 2]
    assert [p.label for p in planned] == names
    cutout, _ = prepare_cutout(image)
    for p in reversed(planned):
        out = p.render()
        assert out.label == p.label
        expected = render_scene(cutout, p.label, params.seed, params.size)
        assert out.pixels.tobytes() == expected.tobytes()
    whole = engine.run(EngineInputs(image), params)
    assert [i.label for i in whole.images] == names
    assert whole.images[2].pixels.tobytes() == planned[2].render().pixels.tobytes()


def test_planning_refuses_an_image_without_a_product() -> None:
    with pytest.raises(EngineError, match="no product"):
        ScenesEngine().plan(EngineInputs(np.full((160, 160, 3), 128, np.uint8)), ScenesParams())


def test_params_bounds() -> None:
    with pytest.raises(ValidationError):
        ScenesParams(num_scenes=13)
    with pytest.raises(ValidationError):
        ScenesParams(num_scenes=0)
    assert ScenesParams().num_scenes == 4 and ScenesParams().size == 1024


def test_an_image_without_a_product_is_refused() -> None:
    with pytest.raises(EngineError, match="no product"):
        ScenesEngine().run(EngineInputs(np.full((160, 160, 3), 128, np.uint8)), ScenesParams())
