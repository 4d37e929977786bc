"""Templated captions (``engines/product_text``) within each platform's limit."""

from __future__ import annotations

from pixelmill.engines.product_text import CAPTION_RULES, hashtags_for, write_captions

URL = "https://shop.example/p/lamp"


def test_captions_respect_each_platform_limit_and_carry_category_hashtags() -> None:
    long_description = "An extraordinarily well made lamp. " * 200
    captions = write_captions(
        name="Arc Lamp " * 20,
        description=long_description,
        brand="Lumen",
        price="€120",
        category="furniture",
        url=URL,
        seed=7,
    )
    assert [c.platform for c in captions] == [r.platform for r in CAPTION_RULES]
    for caption, rule in zip(captions, CAPTION_RULES, strict=True):
        assert 0 < len(caption.text) <= rule.limit, caption
        assert len(caption.hashtags) <= rule.hashtags
        for tag in caption.hashtags:
            assert tag in caption.text
    assert "#homedecor" in hashtags_for("furniture", "Arc Lamp", "Lumen")
    assert hashtags_for("furniture", "Arc Lamp", "Lumen")[0] == "#Lumen"
