"""The reference avatar engine on real photographs: it refuses photos without a person before
any work is charged, and turns the astronaut photo into framed studio variants."""

from __future__ import annotations

import cv2
import matplotlib.cbook as cbook
import numpy as np
import pytest
from skimage import data

from pixelmill.engines.avatar import (
    GuidedAvatarEngine,
    GuidedAvatarParams,
    ReferenceAvatarEngine,
    ReferenceAvatarParams,
)
from pixelmill.engines.avatar.reference import read_details
from pixelmill.engines.base import EngineError, EngineInputs, ImageArray

ENGINE = ReferenceAvatarEngine()


def photo(name: str) -> ImageArray:
    img = np.asarray(getattr(data, name)(), dtype=np.uint8)
    return np.ascontiguousarray(np.dstack([img] * 3)) if img.ndim == 2 else img


def bottle_product_photo() -> ImageArray:
    """A synthetic product shot: a blue bottle with a red cap on a grey sweep."""
    img = np.full((600, 600, 3), 225, np.uint8)
    img[150:520, 240:360] = (40, 110, 170)
    img[100:150, 270:330] = (200, 60, 50)
    return img


@pytest.mark.parametrize(
    "image",
    [
        np.full((400, 300, 3), (90, 140, 200), np.uint8),
        bottle_product_photo(),
        photo("coffee"),
        photo("chelsea"),
    ],
    ids=["flat colour", "product", "coffee", "cat"],
)
def test_no_person_is_refused_at_plan_time(image: ImageArray) -> None:
    params = ReferenceAvatarParams(num_outputs=2, height=256)
    with pytest.raises(EngineError, match="no person found in the reference image"):
        ENGINE.plan(EngineInputs(image), params)
    with pytest.raises(EngineError, match="no person found"):
        ENGINE.run(EngineInputs(image), params)


def test_astronaut_gives_framed_studio_variants_with_landmarks() -> None:
    params = ReferenceAvatarParams(num_outputs=3, seed=2, height=512)
    planned = ENGINE.plan(EngineInputs(photo("astronaut")), params)
    assert [p.position for p in planned] == [0, 1, 2]
    outputs = [p.render() for p in planned]
    assert [o.label for o in outputs] == [p.label for p in planned]
    framings = [o.data["attributes"]["framing"] for o in outputs]
    # The photo shows her from the waist up: half body and head framings, no full body.
    assert framings == ["half", "head", "half"]
    backdrops = [o.data["attributes"]["backdrop"] for o in outputs]
    assert len(set(backdrops)) == 3
    for out in outputs:
        assert out.pixels.shape == (512, 384, 3) and out.pixels.dtype == np.uint8
        lm = out.data["landmarks"]
        assert {"nose", "left_shoulder", "right_shoulder"} <= set(lm)
        for x, y in lm.values():
            assert 0 <= x < 384 and 0 <= y < 512
        assert lm["nose"][1] < lm["left_shoulder"][1]
        assert lm["left_shoulder"][0] > lm["right_shoulder"][0]
        # The top corners are studio backdrop (smooth), not the photo's flag or shuttle.
        corner = out.pixels[:40, -40:].astype(float)
        assert corner.std(axis=(0, 1)).max() < 6
        # The person is in the frame: the nose sits on her face (skin, not backdrop).
        x, y = (round(v) for v in lm["nose"])
        r, g, b = out.pixels[y - 4 : y + 5, x - 4 : x + 5].reshape(-1, 3).mean(axis=0)
        assert r > g > b
    head = outputs[1].data["landmarks"]
    half = outputs[0].data["landmarks"]
    # Head framing shows the face larger than half-body framing.
    assert (head["left_shoulder"][0] - head["right_shoulder"][0]) > (
        half["left_shoulder"][0] - half["right_shoulder"][0]
    )


def test_a_full_length_figure_gets_full_body_framing_standing_on_the_floor() -> None:
    """No full-length person photo ships offline, so a drawn full-length avatar stands in:
    MediaPipe pose finds its ankles, and the first variant frames the whole figure."""
    drawn = GuidedAvatarEngine().run(
        EngineInputs.none(),
        GuidedAvatarParams(prompt="man in a red hoodie and blue jeans, park", height=768),
    )
    params = ReferenceAvatarParams(num_outputs=3, height=512)
    result = ENGINE.run(EngineInputs(drawn.images[0].pixels), params)
    assert result.details["framings"] == ["full", "half", "head"]
    full = result.images[0].data["landmarks"]
    assert {"left_ankle", "right_ankle", "left_hip", "nose"} <= set(full)
    assert 0.8 * 512 < full["left_ankle"][1] < 512
    assert full["nose"][1] < 0.25 * 512


def test_rgba_input_is_read_over_white() -> None:
    rgba = np.dstack([photo("astronaut"), np.full((512, 512), 255, np.uint8)])
    planned = ENGINE.plan(EngineInputs(rgba), ReferenceAvatarParams(num_outputs=2, height=256))
    assert [p.label.split(",")[0] for p in planned] == ["half body", "headshot"]


def test_a_head_and_shoulders_photo_gives_headshots_only() -> None:
    hopper_file = cbook.get_sample_data("grace_hopper.jpg", asfileobj=False)
    bgr = cv2.imread(str(hopper_file))
    assert bgr is not None
    image = np.ascontiguousarray(bgr[..., ::-1], dtype=np.uint8)
    result = ENGINE.run(EngineInputs(image), ReferenceAvatarParams(num_outputs=2, height=256))
    assert result.details["framings"] == ["head", "head"]
    assert result.details["backdrops"][0] != result.details["backdrops"][1]
    for out in result.images:
        assert "nose" in out.data["landmarks"]
        assert out.data["gender"] == "unspecified"


def test_run_is_deterministic_and_applies_a_requested_look() -> None:
    params = ReferenceAvatarParams(
        num_outputs=2, seed=5, height=320, additional_details="sketch, blue background, flamingo"
    )
    first = ENGINE.run(EngineInputs(photo("astronaut")), params)
    second = ENGINE.run(EngineInputs(photo("astronaut")), params)
    for a, b in zip(first.images, second.images, strict=True):
        assert np.array_equal(a.pixels, b.pixels)
    assert first.details["style"] == "sketch"
    assert first.details["unrecognised"] == ["flamingo"]
    assert first.images[0].data["attributes"]["style"] == "sketch"
    assert first.images[1].data["attributes"]["style"] is None
    assert first.images[0].data["attributes"]["backdrop"] == "blue studio"
    # Sketch is a pencil look: far less colourful than the plain variant.
    sat = [np.ptp(im.pixels.astype(float), axis=2).mean() for im in first.images]
    assert sat[0] < 0.5 * sat[1]
    assert "no generative model" in first.details["method"]


def test_additional_details_reading() -> None:
    wishes = read_details("Cartoon headshot on a dark backdrop with a parrot")
    assert wishes.style == "anime"
    assert wishes.framing == "head"
    assert wishes.backdrop == "dark studio"
    assert wishes.unrecognised == ("parrot",)
    assert read_details(None).style is None
