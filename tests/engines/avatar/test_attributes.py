"""Reading guided-avatar prompts: what is understood, what is reported as unrecognised, and how
the open attributes are filled in."""

from __future__ import annotations

import numpy as np
import pytest

from pixelmill.engines.avatar.attributes import (
    HAIR_COLORS,
    SKIN_TONES,
    age_group,
    parse_prompt,
    read_request,
    resolve,
)


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("a young woman with long red hair", {"presentation": "female", "age": "young adult",
                                              "hair_color": "red", "hair_style": "long"}),
        ("man with short black hair and a beard", {"presentation": "male", "hair_style": "short",
                                                   "hair_color": "black",
                                                   "accessories": ["beard"]}),
        ("blonde ponytail, red t-shirt, denim skirt", {"hair_color": "blonde",
                                                       "hair_style": "ponytail", "top": "t-shirt",
                                                       "top_color": "red", "bottom": "skirt"}),
        ("grey bob", {"hair_color": "grey", "hair_style": "bob"}),
        ("red and white striped t-shirt", {"top": "t-shirt", "top_color": "red",
                                           "top_pattern": "white"}),
        ("leather jacket", {"top": "jacket", "top_color": "black leather"}),
        ("dark brown skin, afro", {"skin_tone": "dark brown", "hair_style": "afro"}),
        ("navy suit in an office", {"top": "suit", "top_color": "navy", "backdrop": "office"}),
        ("teen boy", {"presentation": "male", "age": "teen"}),
        ("little girl", {"presentation": "female", "age": "child"}),
        ("35 years old", {"age": "adult", "age_years": 35}),
        ("in her 60s", {"age": "middle-aged", "age_years": 60}),
        ("hands on hips", {"pose": "hands on hips"}),
        ("waving hello at the beach", {"pose": "waving", "backdrop": "beach"}),
        ("blue background", {"backdrop": "studio", "backdrop_color": "blue"}),
        ("businesswoman", {"presentation": "female", "outfit_style": "business"}),
        ("plus-size man in green", {"build": "plus-size", "presentation": "male",
                                    "top_color": "green"}),
        ("named Maya", {"name": "Maya"}),
        ("non-binary person with glasses", {"presentation": "unspecified",
                                            "accessories": ["glasses"]}),
    ],
)  # fmt: skip
def test_prompt_attributes(prompt: str, expected: dict[str, object]) -> None:
    req, unrecognised = parse_prompt(prompt)
    understood = req.understood()
    for key, value in expected.items():
        assert understood.get(key) == value, (key, understood)
    assert unrecognised == [] or prompt == "waving hello at the beach", unrecognised


def test_words_not_understood_are_returned_in_order_once() -> None:
    _, unrecognised = parse_prompt("a woman holding a purple umbrella, umbrella, in the rain")
    # "holding" is a pose word, "purple" has no garment after it here: both stay honest.
    assert unrecognised[:2] == ["purple", "umbrella"]
    assert unrecognised.count("umbrella") == 1
    assert "rain" in unrecognised
    assert "woman" not in unrecognised
    _, unrecognised = parse_prompt("Zoë, a woman with a café au lait 🙂 scarf")
    assert unrecognised == ["zoë", "café", "au", "lait", "scarf"]


def test_characteristics_override_the_prompt_and_report_what_they_cannot_use() -> None:
    req, unrecognised = read_request(
        "man with black hair",
        {"hair_color": "blonde", "gender": "female", "age": "70", "shoe_size": "42",
         "clothing_type": "hoodie", "background": "beach", "skin_tone": "turquoise"},
    )  # fmt: skip
    assert req.hair_color == "blonde"
    assert req.presentation == "female"
    assert req.age == "senior" and req.age_years == 70
    assert req.top == "hoodie"
    assert req.backdrop == "beach"
    assert "shoe_size: 42" in unrecognised
    assert "skin_tone: turquoise" in unrecognised
    # Everything a value says is used, not only the part its key names.
    req, unrecognised = read_request("", {"clothing_type": "short red dress"})
    assert (req.top, req.top_color and req.top_color[0], req.long_hem) == ("dress", "red", False)
    assert unrecognised == []


def test_resolve_fills_every_open_attribute_from_the_seed() -> None:
    req, _ = parse_prompt("woman in a yellow dress")
    looks = [resolve(req, np.random.default_rng(seed)) for seed in range(20)]
    assert all(look.presentation == "female" and look.top == "dress" for look in looks)
    assert all(look.top_color[0] == "yellow" and look.bottom is None for look in looks)
    assert len({look.skin_tone for look in looks}) > 3
    assert len({look.hair_style for look in looks}) > 3
    assert all(look.skin_tone in SKIN_TONES and look.hair_color in HAIR_COLORS for look in looks)
    again = resolve(req, np.random.default_rng(5))
    assert again == looks[5]


def test_age_groups() -> None:
    assert [age_group(y) for y in (6, 15, 25, 40, 50, 80)] == [
        "child", "teen", "young adult", "adult", "middle-aged", "senior",
    ]  # fmt: skip
