"""The guided avatar engine: determinism, planning, landmarks, attributes seen in the pixels,
variety across prompts, and the public gallery."""

from __future__ import annotations

import itertools

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from pixelmill.engines.avatar import (
    GALLERY,
    LANDMARK_NAMES,
    GuidedAvatarEngine,
    GuidedAvatarParams,
    gallery_model,
)
from pixelmill.engines.avatar.attributes import (
    ACCESSORIES,
    AGE_GROUPS,
    BACKDROPS,
    BOTTOMS,
    BUILDS,
    HAIR_STYLES,
    POSES,
    TOPS,
)
from pixelmill.engines.base import EngineInputs, ImageArray, OutputImage

ENGINE = GuidedAvatarEngine()

VARIETY_PROMPTS = (
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


def avatar(prompt: str = "", seed: int = 0, height: int = 384, **kw: object) -> OutputImage:
    params = GuidedAvatarParams(prompt=prompt, seed=seed, height=height, **kw)
    return ENGINE.run(EngineInputs.none(), params).images[0]


def thumb(pixels: ImageArray) -> npt.NDArray[np.float64]:
    return cv2.resize(pixels, (48, 64), interpolation=cv2.INTER_AREA).astype(np.float64)


def test_output_size_and_determinism() -> None:
    a = avatar("woman with short blue hair", seed=7, height=400)
    b = avatar("woman with short blue hair", seed=7, height=400)
    assert a.pixels.shape == (400, 300, 3) and a.pixels.dtype == np.uint8
    assert np.array_equal(a.pixels, b.pixels)
    assert a.data == b.data and a.label == b.label
    c = avatar("woman with short blue hair", seed=8, height=400)
    assert np.abs(thumb(a.pixels) - thumb(c.pixels)).mean() > 3


def test_plan_matches_run_and_output_i_uses_seed_plus_i() -> None:
    params = GuidedAvatarParams(prompt="man in a red hoodie", num_outputs=3, seed=40, height=256)
    planned = ENGINE.plan(EngineInputs.none(), params)
    result = ENGINE.run(EngineInputs.none(), params)
    assert [p.position for p in planned] == [0, 1, 2]
    assert [p.label for p in planned] == [im.label for im in result.images]
    second = planned[1].render()
    assert np.array_equal(second.pixels, result.images[1].pixels)
    alone = avatar("man in a red hoodie", seed=41, height=256)
    assert np.array_equal(alone.pixels, result.images[1].pixels)
    # Outputs of one call differ from each other.
    a, b, c = (thumb(im.pixels) for im in result.images)
    assert min(np.abs(a - b).mean(), np.abs(b - c).mean(), np.abs(a - c).mean()) > 3
    assert result.details["seed"] == 40
    assert "no generative model" in result.details["method"]
    assert result.details["attributes"]["top"] == "hoodie"
    assert result.details["attributes"]["top_color"] == "red"


def check_landmarks(out: OutputImage) -> None:
    h, w = out.pixels.shape[:2]
    lm = out.data["landmarks"]
    assert list(lm) == list(LANDMARK_NAMES)
    for name, (x, y) in lm.items():
        assert 0 <= x < w and 0 <= y < h, name
    for side in ("left", "right"):
        assert lm["nose"][1] < lm[f"{side}_shoulder"][1]
        assert lm[f"{side}_shoulder"][1] < lm[f"{side}_hip"][1]
        assert lm[f"{side}_hip"][1] < lm[f"{side}_knee"][1] < lm[f"{side}_ankle"][1]
    # The figure faces the viewer: the subject's left is on the image's right.
    assert lm["left_shoulder"][0] > lm["right_shoulder"][0]
    assert lm["left_hip"][0] > lm["right_hip"][0]


@pytest.mark.parametrize("pose", POSES)
def test_landmarks_in_canvas_and_anatomically_ordered_for_every_pose(pose: str) -> None:
    out = avatar("person", characteristics={"pose": pose}, height=320)
    assert out.data["attributes"]["pose"] == pose
    check_landmarks(out)


@pytest.mark.parametrize("age", AGE_GROUPS)
def test_landmarks_for_every_age_group(age: str) -> None:
    out = avatar(f"{age} person", characteristics={"age": age}, height=320, seed=3)
    assert out.data["attributes"]["age"] == age
    check_landmarks(out)


@pytest.mark.parametrize(
    "characteristics",
    [{"hair_style": h, "gender": g} for h in HAIR_STYLES for g in ("female", "male")]
    + [{"clothing_type": t} for t in (*TOPS, "dress", "suit", *BOTTOMS)]
    + [{"background": b} for b in BACKDROPS]
    + [{"build": b} for b in BUILDS]
    + [{"accessories": a} for a in ACCESSORIES],
    ids=lambda c: "-".join(c.values()),
)
def test_every_vocabulary_item_is_drawn(characteristics: dict[str, str]) -> None:
    params = GuidedAvatarParams(characteristics=characteristics, height=256, seed=1)
    result = ENGINE.run(EngineInputs.none(), params)
    assert result.details["unrecognised"] == []
    out = result.images[0]
    attrs = out.data["attributes"]
    for key, value in characteristics.items():
        if key == "hair_style":
            # Curls on a man are short unless asked long.
            male_curls = value == "curly" and characteristics["gender"] == "male"
            assert attrs["hair_style"] == ("short curly" if male_curls else value)
        elif key == "clothing_type":
            assert value in (attrs["top"], attrs["bottom"])
        elif key == "background":
            assert attrs["backdrop"] == value
        elif key == "build":
            assert attrs["build"] == value
        elif key == "accessories":
            assert value in attrs["accessories"]
    check_landmarks(out)


def test_waving_hand_is_above_the_head_and_landmarks_sit_on_the_figure() -> None:
    out = avatar("man waving, white background", height=512)
    lm = out.data["landmarks"]
    assert lm["left_wrist"][1] < lm["nose"][1]  # the raised (subject's left) hand
    assert lm["right_wrist"][1] > lm["right_elbow"][1]
    background = np.asarray(out.pixels[5, 5], dtype=float)
    for name in ("left_shoulder", "left_hip", "right_knee", "nose"):
        x, y = (round(v) for v in lm[name])
        assert np.abs(out.pixels[y, x].astype(float) - background).sum() > 30, name


def region(pixels: ImageArray, x: float, y: float, r: int = 3) -> npt.NDArray[np.float64]:
    xi, yi = round(x), round(y)
    patch = pixels[yi - r : yi + r + 1, xi - r : xi + r + 1].reshape(-1, 3).astype(float)
    return np.asarray(np.median(patch, axis=0), dtype=np.float64)


def head_unit(lm: dict[str, list[float]]) -> float:
    shoulder_y = (lm["left_shoulder"][1] + lm["right_shoulder"][1]) / 2
    return (shoulder_y - lm["nose"][1]) / 0.87


def test_red_hair_and_blue_shirt_show_in_the_pixels() -> None:
    out = avatar("woman with short red hair wearing a blue t-shirt, white background", height=640)
    assert out.data["attributes"]["hair_color"] == "red"
    assert out.data["attributes"]["top_color"] == "blue"
    lm = out.data["landmarks"]
    u = head_unit(lm)
    r, g, b = region(out.pixels, lm["nose"][0] - 0.15 * u, lm["nose"][1] - 0.62 * u)
    assert r > g + 40 and r > b + 40, (r, g, b)
    chest_x = (lm["left_shoulder"][0] + lm["right_shoulder"][0]) / 2
    chest_y = lm["left_shoulder"][1] + 0.35 * (lm["left_hip"][1] - lm["left_shoulder"][1])
    r, g, b = region(out.pixels, chest_x + 0.2 * u, chest_y)
    assert b > r + 40, (r, g, b)


def test_skin_tone_orders_the_face_brightness() -> None:
    lum = []
    for tone in ("fair", "medium", "deep"):
        out = avatar(f"man with {tone} skin, bald, white background", height=512)
        lm = out.data["landmarks"]
        u = head_unit(lm)
        lum.append(region(out.pixels, lm["nose"][0] - 0.2 * u, lm["nose"][1] - 0.28 * u).mean())
    assert lum[0] > lum[1] > lum[2]


def test_unrecognised_words_are_reported() -> None:
    params = GuidedAvatarParams(
        prompt="a woman with red hair riding a flamingo",
        characteristics={"eye_color": "green", "hair_style": "mohawk", "pose": "waving"},
        height=256,
    )
    result = ENGINE.run(EngineInputs.none(), params)
    unrecognised = result.details["unrecognised"]
    assert "riding" in unrecognised and "flamingo" in unrecognised
    assert "eye_color: green" in unrecognised
    assert "hair_style: mohawk" in unrecognised
    for used in ("woman", "red", "hair"):
        assert used not in unrecognised
    assert result.details["attributes"]["pose"] == "waving"
    assert result.images[0].data["attributes"]["pose"] == "waving"


def test_twelve_prompts_give_twelve_different_avatars() -> None:
    """No two of 12 prompts alike: pairwise mean absolute difference of 48×64 thumbnails,
    once with each avatar's own backdrop and once with all on the same white backdrop (so
    only the person differs). Measured minima: 15.8 and 12.7 grey levels."""
    for same_backdrop, floor in ((False, 10.0), (True, 6.0)):
        chars = {"background": "white background"} if same_backdrop else None
        thumbs = [
            thumb(avatar(p, seed=0, height=256, characteristics=chars).pixels)
            for p in VARIETY_PROMPTS
        ]
        diffs = [np.abs(a - b).mean() for a, b in itertools.combinations(thumbs, 2)]
        assert len(diffs) == 66
        assert min(diffs) > floor, (same_backdrop, min(diffs))


def test_the_gallery_has_at_least_eight_stable_models_that_render() -> None:
    assert len(GALLERY) >= 8
    ids = [m.id for m in GALLERY]
    assert len(set(ids)) == len(ids)
    assert all(i.startswith("model_") for i in ids)
    assert gallery_model("model_ava") is GALLERY[0]
    assert gallery_model("model_nobody") is None
    for model in GALLERY:
        params = GuidedAvatarParams(prompt=model.prompt, seed=model.seed, height=256)
        result = ENGINE.run(EngineInputs.none(), params)
        assert result.details["unrecognised"] == [], model.id
        out = result.images[0]
        assert out.label.startswith(model.name + ",")
        assert out.data["gender"] == model.gender
        check_landmarks(out)


def test_params_bounds() -> None:
    with pytest.raises(ValueError):
        GuidedAvatarParams(num_outputs=31)  # the interface's limit is 30 per call
    with pytest.raises(ValueError):
        GuidedAvatarParams(height=100)
    with pytest.raises(ValueError):
        GuidedAvatarParams(prompt="x" * 2001)
    out = avatar(height=2048)
    assert out.pixels.shape == (2048, 1536, 3)
