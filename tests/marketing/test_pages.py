"""Reading product facts from page markup (JSON-LD first, then OpenGraph, then the title and
``<img>`` elements)."""

from __future__ import annotations

import pytest

from pixelmill.marketing.pages import PageError, parse_product

URL = "https://shop.example/p/lamp"


def test_json_ld_product_wins_with_offers_brand_and_relative_images() -> None:
    html = """<html><head><meta property="og:title" content="OG name">
    <script type="application/ld+json">[{"@type": "BreadcrumbList"},
     {"@type": ["Product"], "name": "Arc Lamp", "description": "Warm light. Dimmable.",
      "brand": "Lumen", "category": "Furniture > Lighting",
      "image": [{"url": "/i/lamp.jpg"}, "https://cdn.example/lamp2.jpg"],
      "offers": [{"@type": "Offer", "priceSpecification": {"price": 120, "priceCurrency": "EUR"}}]}]
    </script></head><body></body></html>"""
    facts = parse_product(html, URL)
    assert (facts.name, facts.brand, facts.price, facts.currency) == (
        "Arc Lamp",
        "Lumen",
        "120",
        "EUR",
    )
    assert facts.images[:2] == ["https://shop.example/i/lamp.jpg", "https://cdn.example/lamp2.jpg"]
    assert facts.price_label == "€120" and facts.source == "json-ld"


def test_opengraph_then_title_and_img_fallbacks() -> None:
    og = """<html><head><meta property="og:title" content="Canvas Tote">
    <meta property="og:description" content="Sturdy cotton tote.">
    <meta property="product:price:amount" content="18.5">
    <meta property="product:price:currency" content="USD">
    <meta property="og:image" content="https://shop.example/tote.jpg"></head></html>"""
    facts = parse_product(og, URL)
    assert (facts.name, facts.price_label, facts.source) == ("Canvas Tote", "$18.50", "opengraph")
    bare = """<html><head><title> Wool Scarf </title></head><body>
    <img src="data:image/png;base64,AAAA"><img src="/s/small.png" width="10" height="10">
    <img src="/s/scarf.jpg" width="800" height="800"></body></html>"""
    facts = parse_product(bare, URL)
    assert facts.name == "Wool Scarf" and facts.source == "html"
    assert facts.images == ["https://shop.example/s/scarf.jpg", "https://shop.example/s/small.png"]


@pytest.mark.parametrize(
    "html",
    [
        "<html><body><p>no title, no product</p></body></html>",
        "<html><head><title>Only words</title></head><body>no image</body></html>",
    ],
)
def test_a_page_without_a_usable_product_is_a_page_error(html: str) -> None:
    with pytest.raises(PageError):
        parse_product(html, URL)
