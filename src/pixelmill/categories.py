"""Product categories: one vocabulary (:class:`Category`) seen two ways. The library (products,
jobs, the scenes catalogue) stores :data:`LIBRARY_CATEGORIES`; the spec's try-on and
asset-collection surfaces speak :data:`SPEC_CATEGORIES`. :data:`_VIEWS` is the one mapping
between them. Imports nothing of pixelmill, so every layer may read it."""

from __future__ import annotations

from enum import StrEnum


class Category(StrEnum):
    CLOTHING = "clothing"
    ACCESSORIES = "accessories"
    SHOES = "shoes"
    BAGS = "bags"
    JEWELRY = "jewelry"
    ELECTRONICS = "electronics"
    FOOD = "food"
    BEAUTY = "beauty"
    HOME = "home"
    HOUSEWARE = "houseware"
    FURNITURE = "furniture"
    OTHER = "other"
    COSMETICS = "cosmetics"
    WATCHES = "watches"
    TOYS = "toys"


_VIEWS: dict[Category, tuple[Category, Category]] = {
    # category: (as the library stores it, as the spec names it); any other is itself in both
    Category.BEAUTY: (Category.BEAUTY, Category.COSMETICS),
    Category.HOME: (Category.HOME, Category.OTHER),
    Category.HOUSEWARE: (Category.HOUSEWARE, Category.OTHER),
    Category.COSMETICS: (Category.BEAUTY, Category.COSMETICS),
    Category.WATCHES: (Category.ACCESSORIES, Category.WATCHES),
    Category.TOYS: (Category.OTHER, Category.TOYS),
}

LIBRARY_CATEGORIES: tuple[Category, ...] = tuple(c for c in Category if c is _VIEWS.get(c, (c,))[0])
"""What the library stores (in the order the v2 surface lists them)."""

SPEC_CATEGORIES: tuple[Category, ...] = (
    Category.CLOTHING, Category.JEWELRY, Category.FURNITURE, Category.ELECTRONICS, Category.FOOD,
    Category.COSMETICS, Category.ACCESSORIES, Category.SHOES, Category.BAGS, Category.WATCHES,
    Category.TOYS, Category.OTHER,
)  # fmt: skip
"""The spec's vocabulary, in the spec's order (the try-on and asset-collection surfaces)."""


def normalise_category(category: str | None) -> Category:
    """Lower-cased and trimmed; anything outside :data:`LIBRARY_CATEGORIES` reads as ``other``."""
    c = (category or "").strip().lower()
    return Category(c) if c in LIBRARY_CATEGORIES else Category.OTHER


def from_spec(category: str) -> Category:
    """A category of the spec's vocabulary as the library stores it (``cosmetics`` ->
    ``beauty``, ``watches`` -> ``accessories``, ``toys`` -> ``other``)."""
    c = category.strip().lower()
    return _VIEWS[Category(c)][0] if c in _VIEWS else normalise_category(c)


def to_spec(category: str) -> str:
    """A library category in the spec's vocabulary (``beauty`` -> ``cosmetics``); else as is."""
    return _VIEWS[Category(category)][1] if category in _VIEWS else category
