"""Product copy composed from what is known: the product's own title, description and tags,
and the facts the ``analyze`` engine measured on its photo (subject colours, the text printed
on the product, the background, the photo's kind). Nothing is invented: every word of a
result can be traced to one of those inputs, so a plain blue bottle on white is described as
"blue" and "on a white background", never as "stainless" or "leak-proof"."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pixelmill.engines.analyze import guess_product_category
from pixelmill.engines.base import ImageArray

STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "our",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
        "your",
        "you",
        "we",
        "my",
        "new",
        "best",
        "great",
        "more",
        "most",
        "very",
        "just",
        "only",
        "also",
        "set",
        "pack",
        "pcs",
        "piece",
        "pieces",
        "size",
        "one",
        "two",
        "three",
        "x",
        "",
    }
)

MAX_DESCRIPTION_CHARS = 1200


@dataclass(frozen=True)
class ProductFacts:
    """What the photo showed, as far as the analysis can tell."""

    colours: list[str] = field(default_factory=list)
    background: str | None = None
    printed_text: list[str] = field(default_factory=list)
    category: str = "other"
    people: bool = False
    style: str | None = None


def _hex_rgb(code: str) -> np.ndarray[Any, np.dtype[np.float64]]:
    code = code.lstrip("#")
    return np.array([int(code[i : i + 2], 16) for i in (0, 2, 4)], dtype=np.float64)


def border_colour(pixels: ImageArray) -> np.ndarray[Any, np.dtype[np.float64]]:
    """The median colour of the image's outer rows and columns (its background, for a product
    shot on a plain backdrop)."""
    rgb = pixels[..., :3]
    border = np.concatenate([rgb[0], rgb[-1], rgb[:, 0], rgb[:, -1]]).astype(np.float64)
    return np.asarray(np.median(border, axis=0), dtype=np.float64)


def facts_from_analysis(
    analysis: dict[str, Any], pixels: ImageArray | None, title: str, description: str
) -> ProductFacts:
    """The facts text is built from: the palette split into subject and background colours
    (a palette colour close to the border colour is the background), OCR lines, people, and
    the category the analysis' keyword rule finds in the printed text *and* the product's own
    words."""
    colours: list[str] = []
    background: str | None = None
    plain_background = False
    ref: np.ndarray[Any, np.dtype[np.float64]] | None = None
    if pixels is not None:
        ref = border_colour(pixels)
        spread = float(np.abs(pixels[0, :, :3].astype(np.float64) - ref).mean())
        plain_background = spread < 12.0
    for c in analysis.get("colors", []):
        name = str(c.get("name", "")).strip()
        if not name:
            continue
        near_border = ref is not None and float(np.abs(_hex_rgb(str(c["hex"])) - ref).sum()) < 60.0
        if near_border:
            if background is None and plain_background:
                background = name
            continue
        if float(c.get("percentage", 0.0)) >= 2.0 and name not in colours:
            colours.append(name)
    printed = [t.strip() for t in analysis.get("text_detected", []) if len(t.strip()) >= 2]
    objects = " ".join(analysis.get("objects", []))
    cue = {
        "text_detected": [*printed, title, description],
        "objects": analysis.get("objects", []),
    }
    return ProductFacts(
        colours=colours[:3],
        background=background,
        printed_text=printed[:3],
        category=guess_product_category(cue),
        people="person" in objects or "people" in objects,
        style=str(analysis.get("style") or "") or None,
    )


def _sentences(text: str) -> list[str]:
    text = re.sub(r"<[^>]+>", " ", text)  # a storefront description may be HTML
    text = re.sub(r"\s+", " ", text).strip()
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def _join(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _end(sentence: str) -> str:
    return sentence if sentence.endswith((".", "!", "?")) else sentence + "."


def compose_description(title: str, description: str, facts: ProductFacts | None) -> str:
    """The title as the lead, the product's own description kept (tidied: HTML tags and runs of
    white space removed), then what the photo shows: colours, printed text, a person wearing or
    holding it."""
    parts = [_end(title.strip())]
    parts.extend(_end(s) for s in _sentences(description))
    if facts is not None:
        if facts.colours:
            parts.append(f"Shown in {_join(facts.colours)}.")
        if facts.printed_text:
            shown = "; ".join(f'"{t}"' for t in facts.printed_text[:2])
            parts.append(f"The label reads {shown}.")
        if facts.people:
            parts.append("Pictured with a person for scale and fit.")
    text = " ".join(parts)
    if len(text) > MAX_DESCRIPTION_CHARS:
        text = text[: MAX_DESCRIPTION_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return text


def _keywords(text: str) -> list[str]:
    words = re.findall(r"[a-z][a-z0-9-]{2,}", text.lower())
    return [w for w in words if w not in STOPWORDS]


def compose_tags(
    title: str, description: str, tags: list[str], facts: ProductFacts | None, limit: int
) -> list[str]:
    """The product's own tags first (kept as given, de-duplicated case-insensitively), then the
    title's words, the category, the subject colours, words printed on the product, then the
    description's most frequent words."""
    out: list[str] = []
    seen: set[str] = set()

    def add(tag: str) -> None:
        tag = tag.strip()
        if tag and tag.lower() not in seen and len(out) < limit:
            seen.add(tag.lower())
            out.append(tag)

    for t in tags:
        add(t)
    for w in _keywords(title):
        add(w)
    if facts is not None:
        if facts.category != "other":
            add(facts.category)
        for c in facts.colours:
            add(c)
        for line in facts.printed_text:
            for w in _keywords(line):
                add(w)
    counts: dict[str, int] = {}
    for w in _keywords(description):
        counts[w] = counts.get(w, 0) + 1
    for w in sorted(counts, key=lambda k: (-counts[k], k)):
        add(w)
    return out


def compose_alt_text(title: str, facts: ProductFacts | None) -> str:
    """One short line for a screen reader: the product's name, its colours, the printed text
    and the background, as measured."""
    alt = title.strip()
    if facts is None:
        return _end(alt)[:250]
    if facts.colours:
        alt += f" in {_join(facts.colours[:2])}"
    if facts.printed_text:
        alt += f', labelled "{facts.printed_text[0]}"'
    if facts.people:
        alt += ", shown with a person"
    if facts.background:
        alt += f", on a plain {facts.background} background"
    return _end(alt)[:250]
