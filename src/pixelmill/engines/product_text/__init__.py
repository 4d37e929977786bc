"""Storefront product copy (description, tags, alt text) from a product's own words and its
photo's measured facts."""

from pixelmill.engines.product_text.engine import (
    TEXT_FIELDS,
    ProductTextEngine,
    ProductTextParams,
    TextField,
)

__all__ = ["TEXT_FIELDS", "ProductTextEngine", "ProductTextParams", "TextField"]
