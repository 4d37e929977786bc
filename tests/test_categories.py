"""The one category vocabulary: the library's view matches the scenes catalogue, and the
mapping between the library's and the spec's names is the one the surfaces always used."""

from __future__ import annotations

from pixelmill.categories import (
    LIBRARY_CATEGORIES,
    SPEC_CATEGORIES,
    Category,
    from_spec,
    normalise_category,
    to_spec,
)
from pixelmill.engines.runtime.scenery import CATEGORIES as SCENE_POOLS


def test_the_library_vocabulary_is_the_scenes_catalogues() -> None:
    assert set(LIBRARY_CATEGORIES) == set(SCENE_POOLS)
    assert set(LIBRARY_CATEGORIES) | set(SPEC_CATEGORIES) == set(Category)
    assert len(SPEC_CATEGORIES) == len(set(SPEC_CATEGORIES)) == 12


def test_normalise_keeps_library_names_only() -> None:
    assert normalise_category(" Clothing ") == "clothing"
    assert normalise_category(None) == normalise_category("cosmetics") == "other"
    assert normalise_category("home") == "home"


def test_spec_names_map_to_the_library_and_back() -> None:
    to_library = {c: from_spec(c) for c in SPEC_CATEGORIES}
    renamed = {k: v for k, v in to_library.items() if k != v}
    assert renamed == {"cosmetics": "beauty", "watches": "accessories", "toys": "other"}
    assert all(v in LIBRARY_CATEGORIES for v in to_library.values())
    assert from_spec(" Cosmetics") == "beauty"
    from_library = {c: to_spec(c) for c in LIBRARY_CATEGORIES}
    assert {k: v for k, v in from_library.items() if k != v} == {
        "beauty": "cosmetics",
        "home": "other",
        "houseware": "other",
    }
    assert all(v in SPEC_CATEGORIES for v in from_library.values())
    assert to_spec("not a category") == "not a category"
