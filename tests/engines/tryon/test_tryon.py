"""The try-on engine: a non-clothing product is refused before any work, the garment lands on
the torso of every gallery avatar (the landing rate ``docs/engines.md`` reports is measured
here), its colour and print survive the warp, and outputs repeat per seed."""

from __future__ import annotations

import itertools

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from pixelmill.engines.base import EngineError, EngineInputs, ImageArray
from pixelmill.engines.product_photo import Figure, torso_polygon
from pixelmill.engines.tryon import Dressed, ThinPlateSpline, TryOnEngine, TryOnParams, read_garment
from tests.engines.product_photo.test_product_photo import (
    MAGENTA,
    astronaut,
    bottle,
    colour_mask,
    gallery_avatar,
    sweater,
    tank_top,
    tshirt,
)

ENGINE = TryOnEngine()


def params(**kw: object) -> TryOnParams:
    kw.setdefault("category", "clothing")
    kw.setdefault("size", 384)
    return TryOnParams.model_validate(kw)


# --- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize("category", ["food", "electronics", "bags", "other"])
def test_a_product_that_is_not_clothing_is_refused_by_validate_and_plan(category: str) -> None:
    message = f"try-on needs a clothing product; this product's category is {category}"
    with pytest.raises(EngineError) as caught:
        ENGINE.validate(params(category=category))
    assert str(caught.value) == message
    avatar, landmarks = gallery_avatar(0)
    inputs = EngineInputs(avatar, {"product": bottle()})
    with pytest.raises(EngineError, match="try-on needs a clothing product"):
        ENGINE.plan(inputs, params(category=category, landmarks=landmarks))
    ENGINE.validate(params(category=" Clothing "))


def test_an_avatar_image_without_a_person_is_refused() -> None:
    empty = np.full((480, 360, 3), (200, 170, 120), np.uint8)
    with pytest.raises(EngineError, match="no person found in the avatar image"):
        ENGINE.plan(EngineInputs(empty, {"product": tshirt()}), params())


def test_a_body_seen_edge_on_fails_the_output_instead_of_delivering_nothing() -> None:
    """The gate the issue's back-view photo showed missing: with the shoulders and hips nearly
    on top of each other (what the pose graph gives for a person seen from behind or from the
    side), the warp drew a sliver at the neck (127 px of a 92,367 px person) and the job still
    delivered and charged it. Now rendering that output is an EngineError with the reason."""
    avatar, landmarks = gallery_avatar(0)
    cx = (landmarks["left_shoulder"][0] + landmarks["right_shoulder"][0]) / 2
    edge_on = {
        name: [cx + (1.0 if name.startswith("left") else -1.0), y]
        if name.split("_", 1)[-1] in ("shoulder", "hip", "elbow", "wrist")
        else [x, y]
        for name, (x, y) in landmarks.items()
    }
    inputs = EngineInputs(avatar, {"product": tshirt()})
    (planned,) = ENGINE.plan(inputs, params(landmarks=edge_on, num_outputs=1))
    with pytest.raises(EngineError, match="could not be fitted to this body") as caught:
        planned.render()
    assert "seen from behind" in str(caught.value)
    (front,) = ENGINE.plan(inputs, params(landmarks=landmarks, num_outputs=1))
    assert front.render().pixels.shape == (384, 288, 3)


# --- the fit ----------------------------------------------------------------------------------


def landing(dressed: Dressed) -> tuple[float, float, float]:
    """How a fit lands, in the avatar's working pixels:

    - ``strict``: the share of the warped garment (alpha-weighted) inside the quadrilateral
      through the shoulder and hip landmarks (joints: the body and the sleeves reach beyond
      it, so even a perfect fit scores well below 1);
    - ``zone``: the share inside the torso zone: that quadrilateral grown by a quarter torso
      length (the body's outline, the shoulder tops, a hem below the hips) plus the arms
      (shoulder-elbow-wrist, 0.36 torso lengths wide: the sleeves);
    - ``cover``: the share of the quadrilateral's lower half (chest to hips: below any
      armhole) that the garment covers."""
    figure: Figure = dressed.figure
    body = figure.body
    h, w = figure.size
    quad = np.zeros((h, w), np.uint8)
    corners = torso_polygon(body)
    cv2.fillConvexPoly(quad, np.round(corners).astype(np.int32), 1)
    dist = cv2.distanceTransform((1 - quad).astype(np.uint8), cv2.DIST_L2, 5)
    zone = (dist <= 0.25 * body.unit).astype(np.uint8)
    width = max(1, round(0.36 * body.unit))
    for side in ("left", "right"):
        chain = [figure.landmarks.get(f"{side}_{j}") for j in ("shoulder", "elbow", "wrist")]
        for a, b in itertools.pairwise(chain):
            if a is not None and b is not None:
                cv2.line(zone, (round(a[0]), round(a[1])), (round(b[0]), round(b[1])), 1, width)
    ga = dressed.garment_alpha
    inside = quad > 0
    below = np.arange(h)[:, None] > body.shoulder_mid[1] + 0.5 * body.unit
    core = inside & below
    total = float(ga.sum())
    strict = float(ga[inside].sum()) / total
    in_zone = float(ga[zone > 0].sum()) / total
    cover = float((ga[core] > 0.5).mean())
    return strict, in_zone, cover


LANDED_ZONE = 0.9
LANDED_COVER = 0.9


@pytest.mark.slow  # 30 fits, half a minute: left out of `scripts/test --fast`
def test_the_garment_lands_on_the_torso_of_every_gallery_avatar() -> None:
    """10 gallery avatars × a T-shirt, a long-sleeved sweater and a tank top: a fit has landed
    when at least 90 % of the garment lies in the torso zone and it covers at least 90 % of
    the torso's lower half. Measured when written: 30 of 30 landed; zone share mean 0.986
    (min 0.922), cover 1.0 everywhere, strict share (plain shoulder-hip quadrilateral) mean
    0.52. A knee-length dress, not in this set, covers the torso as fully but its skirt lies
    outside the zone by design (zone share 0.57)."""
    rows = []
    for index in range(10):
        avatar, landmarks = gallery_avatar(index)
        for garment in (tshirt(), sweater(), tank_top()):
            inputs = EngineInputs(avatar, {"product": garment})
            rows.append(landing(ENGINE.dress(inputs, params(landmarks=landmarks))))
    table = np.asarray(rows)
    landed = (table[:, 1] >= LANDED_ZONE) & (table[:, 2] >= LANDED_COVER)
    assert landed.mean() >= 0.9, table.round(3)
    assert table[:, 1].mean() >= 0.95 and table[:, 2].mean() >= 0.95, table.mean(axis=0)
    assert table[:, 0].mean() >= 0.4, table.mean(axis=0)


def hue_mask(pixels: ImageArray, rgb: tuple[int, int, int]) -> npt.NDArray[np.bool_]:
    """Pixels of the same hue as ``rgb`` (±12°) and clearly saturated: robust to the
    shading the fit multiplies onto the fabric."""
    hsv = cv2.cvtColor(pixels, cv2.COLOR_RGB2HSV_FULL).astype(np.int16)
    swatch = np.full((1, 1, 3), rgb, np.uint8)
    target = cv2.cvtColor(swatch, cv2.COLOR_RGB2HSV_FULL)[0, 0].astype(np.int16)
    dh = np.abs(hsv[..., 0] - target[0])
    dh = np.minimum(dh, 256 - dh)
    return np.asarray((dh <= 9) & (hsv[..., 1] > 90) & (hsv[..., 2] > 60), dtype=np.bool_)


@pytest.mark.parametrize("index", [0, 2, 5, 6])
def test_the_garment_colour_fills_the_torso_and_stays_off_the_rest(index: int) -> None:
    avatar, landmarks = gallery_avatar(index)
    inputs = EngineInputs(avatar, {"product": tshirt(MAGENTA, stripe=False)})
    result = ENGINE.run(inputs, params(landmarks=landmarks, num_outputs=2))
    for img in result.images:
        lm = img.data["landmarks"]
        quad = np.asarray(
            [lm["left_shoulder"], lm["right_shoulder"], lm["right_hip"], lm["left_hip"]],
            np.float32,
        )
        h, w = img.pixels.shape[:2]
        inside = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(inside, np.round(quad).astype(np.int32), 1)
        unit = float(np.hypot(*(quad[:2].mean(0) - quad[2:].mean(0))))
        dist = cv2.distanceTransform((1 - inside).astype(np.uint8), cv2.DIST_L2, 5)
        garment = hue_mask(img.pixels, MAGENTA)
        # Forearms in front (hands on hips) hide part of it.
        assert garment[inside > 0].mean() > 0.75, (img.label, garment[inside > 0].mean())
        far = dist > 0.9 * unit
        assert garment[far].mean() < 0.005, (img.label, garment[far].mean())


def test_the_print_is_kept() -> None:
    """The T-shirt's white chest stripe is still there, across the chest, after the warp."""
    avatar, landmarks = gallery_avatar(3)
    dressed = ENGINE.dress(
        EngineInputs(avatar, {"product": tshirt(MAGENTA)}), params(landmarks=landmarks)
    )
    figure = dressed.figure
    colour = figure.premult / np.maximum(figure.alpha, 1e-4)[..., None]
    body = figure.body
    x0 = round(body["right_shoulder"][0] + 0.1 * body.shoulder_width)
    x1 = round(body["left_shoulder"][0] - 0.1 * body.shoulder_width)
    y0, y1 = round(body.shoulder_mid[1]), round(body.hip_mid[1])
    rows = colour[y0:y1, x0:x1].min(axis=-1).mean(axis=1)
    # A band of near-white rows (the stripe) between magenta rows.
    assert rows.max() > 0.8 and np.median(rows) < 0.4


def test_outputs_repeat_per_seed_and_vary_by_backdrop_and_framing() -> None:
    avatar, landmarks = gallery_avatar(1)
    inputs = EngineInputs(avatar, {"product": sweater()})
    p = params(landmarks=landmarks, num_outputs=3, seed=4, size=320)
    planned = ENGINE.plan(inputs, p)
    first = [item.render() for item in planned]
    again = ENGINE.run(inputs, p)
    assert [o.label for o in first] == [o.label for o in again.images]
    assert all(np.array_equal(a.pixels, b.pixels) for a, b in zip(first, again.images, strict=True))
    assert all(o.pixels.shape == (320, 240, 3) for o in first)
    assert len({o.label for o in first}) == 3
    assert again.details["framings"] == ["full", "half", "full"]
    assert "thin-plate spline" in again.details["method"]
    assert again.details["scenes"][0] == "white studio sweep"


def test_a_prompt_picks_backdrops_and_unknown_words_are_reported() -> None:
    avatar, landmarks = gallery_avatar(2)
    inputs = EngineInputs(avatar, {"product": tank_top()})
    result = ENGINE.run(
        inputs,
        params(landmarks=landmarks, num_outputs=2, prompt="beach, half body, tropical vibes"),
    )
    assert result.details["scenes"] == ["beach sand", "beach sand"]
    assert result.details["framings"] == ["half", "half"]
    assert result.details["unrecognised"] == ["vibes"]


def test_a_reference_photo_is_dressed() -> None:
    """The astronaut (pose landmarks found by MediaPipe; no hips in the picture: estimated)."""
    result = ENGINE.run(
        EngineInputs(astronaut(), {"product": tshirt(MAGENTA)}), params(num_outputs=1)
    )
    img = result.images[0]
    assert img.data["framing"] == "half"
    lm = img.data["landmarks"]
    (lx, ly), (rx, ry) = lm["left_shoulder"], lm["right_shoulder"]
    chest = img.pixels[round(max(ly, ry)) + 10 : round(max(ly, ry)) + 60, round(rx) : round(lx)]
    assert hue_mask(chest, MAGENTA).mean() > 0.5
    assert colour_mask(img.pixels, MAGENTA).mean() < 0.35


def test_garment_reading_finds_sleeves_and_their_absence() -> None:
    from pixelmill.engines.tryon import prepare_garment

    shirt, _ = prepare_garment(tshirt())
    assert shirt.left_sleeve is not None and shirt.right_sleeve is not None
    assert shirt.neck_y < shirt.armpit_y < shirt.hem_y
    tank, _ = prepare_garment(tank_top())
    assert tank.left_sleeve is None and tank.right_sleeve is None
    with pytest.raises(EngineError):
        read_garment(np.zeros((4, 4, 4), np.uint8))


def test_the_thin_plate_spline_interpolates_its_points() -> None:
    rng = np.random.default_rng(1)
    src = rng.uniform(0, 100, (12, 2))
    dst = src * 1.3 + rng.normal(0, 4, (12, 2)) + 7
    tps = ThinPlateSpline(src, dst)
    assert np.abs(tps(src) - dst).max() < 1e-6
    affine = ThinPlateSpline(src, src * 2 + 3)
    probe = rng.uniform(0, 100, (5, 2))
    assert np.abs(affine(probe) - (probe * 2 + 3)).max() < 1e-6
