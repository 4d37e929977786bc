"""Captions per platform, from templates (not a language model): the product's name, a
benefit taken from its description, the price and brand when known, a call to action, and
hashtags from its category. Each caption stays within its platform's limit, counted in
characters with the hashtags included."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from pixelmill.categories import Category

METHOD = (
    "templated captions (fixed sentence patterns filled with the page's facts); no language model"
)


@dataclass(frozen=True)
class CaptionRule:
    platform: str
    limit: int
    hashtags: int
    note: str


RULES: tuple[CaptionRule, ...] = (
    CaptionRule("instagram", 2200, 6, "caption limit 2,200 characters, up to 30 hashtags"),
    CaptionRule("facebook", 500, 2, "primary text; about 125 characters show before 'See more'"),
    CaptionRule("twitter", 280, 2, "post limit 280 characters"),
    CaptionRule("linkedin", 600, 3, "single-image ad introductory text limit 600 characters"),
    CaptionRule("pinterest", 500, 4, "pin description limit 500 characters"),
    CaptionRule(
        "tiktok", 150, 3, "kept short: in-feed ad text allows 100 characters without hashtags"
    ),
)

CATEGORY_TAGS: dict[str, tuple[str, ...]] = {
    Category.CLOTHING: ("fashion", "ootd", "style", "newin", "wardrobe"),
    Category.SHOES: ("sneakers", "shoes", "footwear", "kicks", "style"),
    Category.JEWELRY: ("jewelry", "handmade", "accessories", "giftideas", "sparkle"),
    Category.ACCESSORIES: ("accessories", "style", "everydaycarry", "giftideas"),
    Category.BAGS: ("bags", "handbag", "style", "accessories"),
    Category.WATCHES: ("watches", "wristwatch", "timepiece", "style"),
    Category.FURNITURE: ("homedecor", "interiordesign", "furniture", "homestyle"),
    Category.HOUSEWARE: ("homedecor", "kitchen", "homeessentials", "homestyle"),
    Category.ELECTRONICS: ("tech", "gadgets", "techgear", "innovation"),
    Category.BEAUTY: ("beauty", "skincare", "selfcare", "glow"),
    Category.COSMETICS: ("beauty", "makeup", "skincare", "selfcare"),
    Category.FOOD: ("foodie", "delicious", "treatyourself", "snacks"),
    Category.TOYS: ("toys", "kids", "playtime", "giftideas"),
    Category.OTHER: ("shopsmall", "newarrivals", "musthave", "giftideas"),
}

_WORD = re.compile(r"[A-Za-z0-9]+")


def _tag(text: str) -> str:
    words = _WORD.findall(text)
    return "".join(w[:1].upper() + w[1:] for w in words)[:30]


def hashtags_for(category: str, name: str, brand: str) -> list[str]:
    tags: list[str] = []
    if brand:
        tags.append(_tag(brand))
    tags.extend(CATEGORY_TAGS.get(category, CATEGORY_TAGS[Category.OTHER]))
    significant = [w for w in _WORD.findall(name) if len(w) > 2][:2]
    if significant:
        tags.append(_tag(" ".join(significant)))
    seen: set[str] = set()
    out: list[str] = []
    for tag in tags:
        if tag and tag.lower() not in seen:
            seen.add(tag.lower())
            out.append("#" + tag)
    return out


def shorten(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word within ``limit`` characters (an ellipsis when cut)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:-") + "…"


def first_sentence(text: str, limit: int = 140) -> str:
    """The description's first sentence, cut at a word boundary within ``limit``."""
    text = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    sentence = match.group(1) if match else text
    if len(sentence) <= limit:
        return sentence
    cut = sentence[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"


_OPENERS = {
    "instagram": (
        "Meet the {name}.",
        "New in: the {name}.",
        "Say hello to the {name}.",
    ),
    "facebook": ("Meet the {name}.", "Looking for something new? The {name} is here."),
    "twitter": ("The {name} is here.", "New: the {name}."),
    "linkedin": ("Introducing the {name}.", "We are proud to present the {name}."),
    "pinterest": ("{name}.", "{name}: a closer look."),
    "tiktok": ("POV: you found the {name}.", "The {name} you did not know you needed."),
}
_CTAS = {
    "instagram": ("Tap the link in our bio to shop.", "Shop now via the link in bio."),
    "facebook": ("Shop now.", "Order yours today."),
    "twitter": ("Shop now:", "Get yours:"),
    "linkedin": ("Learn more and order on our site.", "See the details on our website."),
    "pinterest": ("Save this pin and shop the look.", "Tap to shop."),
    "tiktok": ("Shop now.", "Link in bio."),
}


@dataclass(frozen=True)
class Caption:
    platform: str
    text: str
    hashtags: list[str]
    limit: int

    def as_dict(self) -> dict[str, object]:
        return {
            "platform": self.platform,
            "text": self.text,
            "hashtags": self.hashtags,
            "characters": len(self.text),
            "limit": self.limit,
        }


def fit_caption(parts: list[str], tags: list[str], limit: int) -> tuple[str, list[str]]:
    """Join ``parts`` and ``tags`` within ``limit`` characters: hashtags go first, then the
    least important parts (from the end, keeping the opener)."""
    parts = [p for p in parts if p]
    tags = list(tags)
    while True:
        body = " ".join(parts)
        text = f"{body}\n\n{' '.join(tags)}" if tags else body
        if len(text) <= limit:
            return text, tags
        if len(tags) > 1:
            tags.pop()
        elif len(parts) > 1:
            parts.pop(-2 if len(parts) > 2 else -1)
        elif tags:
            tags.pop()
        else:
            return body[: limit - 1] + "…", []


def write_captions(
    *,
    name: str,
    description: str,
    brand: str,
    price: str,
    category: str,
    url: str,
    seed: int,
) -> list[Caption]:
    """One caption per platform of :data:`RULES`."""
    rng = random.Random(seed)
    tags = hashtags_for(category, name, brand)
    benefit = first_sentence(description) if description else ""
    short_name = name if len(name) <= 60 else name[:57].rsplit(" ", 1)[0] + "…"
    captions: list[Caption] = []
    for rule in RULES:
        opener = rng.choice(_OPENERS[rule.platform]).format(name=short_name)
        cta = rng.choice(_CTAS[rule.platform])
        by = f"By {brand}." if brand and brand.lower() not in name.lower() else ""
        cost = f"Now {price}." if price else ""
        link = url if rule.platform in ("twitter", "facebook", "linkedin") else ""
        if rule.platform == "tiktok":
            parts = [opener, cost, cta]
        elif rule.platform == "twitter":
            parts = [opener, benefit, cost, cta, link]
        else:
            parts = [opener, benefit, by, cost, cta, link]
        text, used = fit_caption(parts, tags[: rule.hashtags], rule.limit)
        captions.append(Caption(rule.platform, text, used, rule.limit))
    return captions
