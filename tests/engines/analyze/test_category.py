"""The product category classifier: drawn studio photos named by their outline, a portrait
and a scene left ``other``, printed words first, the file name a weak hint."""

from __future__ import annotations

import numpy as np
import pytest
from skimage import data

from pixelmill.categories import Category
from pixelmill.engines.analyze import analyze_image
from pixelmill.engines.analyze.category import CategoryGuess, named
from tests.support.product_photos import KINDS, render

BY_NAME = {kind.name: kind for kind in KINDS}


def _guess(image: np.ndarray) -> dict[str, object]:
    guess = analyze_image(image)["product_category"]
    assert isinstance(guess, dict)
    return guess


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("tshirt", "clothing"),
        ("dress", "clothing"),
        ("trousers", "clothing"),
        ("hoodie", "clothing"),
        ("pump-bottle", "cosmetics"),
        ("wine-bottle", "food"),
        ("shoe", "shoes"),
        ("bag", "bags"),
        ("ring", "jewelry"),
        ("chair", "furniture"),
    ],
)
def test_a_studio_product_is_named_by_its_outline(kind: str, expected: str) -> None:
    guess = _guess(render(BY_NAME[kind], np.random.default_rng(2026)))
    assert guess["category"] == expected, guess
    assert str(guess["method"]).startswith("outline:")
    assert 0.3 <= float(str(guess["confidence"])) <= 0.6


def test_a_portrait_and_a_scene_are_not_products() -> None:
    portrait = _guess(data.astronaut())  # type: ignore[no-untyped-call]
    assert portrait["category"] == "other" and "portrait" in str(portrait["method"])
    scene = _guess(data.chelsea())  # type: ignore[no-untyped-call]
    assert scene["category"] == "other" and float(str(scene["confidence"])) <= 0.2


def test_the_file_name_is_a_weak_hint() -> None:
    unknown = CategoryGuess(Category.OTHER, 0.2, "outline: no product shape we know")
    assert named(unknown, "red-tshirt.png").category is Category.CLOTHING
    assert named(unknown, "red-tshirt.png").confidence == 0.35
    assert named(unknown, "IMG_0042.jpg") == unknown
    sure = CategoryGuess(Category.SHOES, 0.5, "outline: low and one-sided (shoe)")
    assert named(sure, "dress.png") == sure  # the outline outweighs a contrary name
    agreed = named(sure, "sneaker.jpg")
    assert agreed.category is Category.SHOES and agreed.confidence == pytest.approx(0.7)


def test_the_guess_round_trips_through_the_analysis() -> None:
    guess = CategoryGuess(Category.BEAUTY, 0.4, "outline: a bottle with a cap or pump")
    reported = guess.as_dict()
    assert reported["category"] == "cosmetics"  # the spec's vocabulary
    assert CategoryGuess.of(reported) == guess
