"""The product_text engine: copy composed from the product's own words and the photo's measured
facts, never invented; priced per field by the catalog."""

from __future__ import annotations

from pixelmill.engines.base import EngineInputs
from pixelmill.engines.product_text import ProductTextEngine, ProductTextParams
from pixelmill.engines.product_text.compose import (
    ProductFacts,
    compose_alt_text,
    compose_description,
    compose_tags,
)
from pixelmill.operations.catalog import CATALOG
from tests.storefront.helpers import COLOURS, product_photo


def test_compose_uses_only_what_is_known() -> None:
    facts = ProductFacts(
        colours=["navy", "white"],
        background="white",
        printed_text=["AQUA PURE"],
        category="food",
    )
    text = compose_description("Water Bottle", "<b>Holds 1 l.</b>  Dishwasher safe", facts)
    assert text == (
        "Water Bottle. Holds 1 l. Dishwasher safe. Shown in navy and white. The label reads "
        '"AQUA PURE".'
    )
    tags = compose_tags("Water Bottle", "bottle bottle steel", ["Summer", "summer"], facts, 8)
    assert tags == ["Summer", "water", "bottle", "food", "navy", "white", "aqua", "pure"]
    alt = compose_alt_text("Water Bottle", facts)
    assert (
        alt == 'Water Bottle in navy and white, labelled "AQUA PURE", on a plain white background.'
    )
    assert compose_alt_text("Mug", None) == "Mug."
    assert compose_description("Mug", "", None) == "Mug."


def test_engine_reads_the_photo_and_the_catalog_prices_each_field() -> None:
    engine = ProductTextEngine()
    params = ProductTextParams(title="Green Vase", fields=["alt_text", "tags"])
    result = engine.run(EngineInputs(product_photo(COLOURS["green"])), params)
    assert set(result.details) == {"alt_text", "tags", "facts", "method"}
    assert result.details["facts"]["colours"][0] == "green"
    assert result.details["alt_text"].startswith("Green Vase in green")
    assert "white background" in result.details["alt_text"]
    assert "green" in result.details["tags"]
    assert "no language model" in result.details["method"]
    assert CATALOG["product_text"].price(params) == 2
    assert CATALOG["product_text"].price(ProductTextParams(title="x")) == 3
