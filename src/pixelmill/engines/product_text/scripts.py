"""Voice-over scripts for short product videos: templated, not a language model.

A script is a hook, one or more benefit lines and a call to action, chosen from per-tone
template pools and filled with the product's name and a few measured facts (its colours, its
category, text read on it). The number of words is fitted to the duration with the voice's
measured speaking rate (:data:`WORDS_PER_SECOND`): among the combinations of lines the one
closest to the budget is taken, so 5, 15 and 30 second scripts land within ±20 % of it.
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass, field
from typing import Any

WORDS_PER_SECOND = 2.7
"""Words per second of the Piper voice (en_US-joe-medium) as synthesised here, pauses between
phrases included, measured on this module's own 15 and 30 second scripts (2.2 to 2.95 across
tones; bench/video.py prints it)."""
FIXED_SECONDS = 0.4
"""Silence before the first and after the last word, which holds no words."""

TONES = ("enthusiastic", "casual", "professional", "problem-solution")
DEFAULT_TONE = "enthusiastic"
MIN_SECONDS, MAX_SECONDS = 3, 60
METHOD = (
    "templated script (hook, benefits, call to action) filled with the product's name and "
    "measured facts; not a language model; length fitted to the voice's measured "
    f"{WORDS_PER_SECOND} words per second"
)

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’%-]*")

HOOKS: dict[str, list[str]] = {
    "enthusiastic": [
        "Meet {name}!",
        "You have to see {name}!",
        "This is {name}, and it is a game changer!",
        "Stop scrolling, this is {name}!",
        "Say hello to {name}, your new favourite!",
    ],
    "casual": [
        "So, this is {name}.",
        "Okay, let me show you {name}.",
        "Quick look at {name}.",
        "Been using {name} lately, and honestly, I like it.",
    ],
    "professional": [
        "Introducing {name}.",
        "This is {name}.",
        "{name}: designed with care, made to last.",
        "Introducing {name}, built for everyday use.",
    ],
    "problem-solution": [
        "Tired of settling for less? Try {name}.",
        "Still looking for the right one? Meet {name}.",
        "Sick of things that never quite work? {name} does.",
        "Here is the fix: {name}.",
    ],
}

BENEFITS: dict[str, list[str]] = {
    "enthusiastic": [
        "Look at that {colour} finish.",
        "It looks amazing from every angle.",
        "{description}",
        "It is the kind of {category} you will reach for every single day.",
        "Great quality, great look, and it just works.",
        "Everyone who sees it asks where I got it.",
        "Honestly, it makes every day a little better.",
        "The details are even better up close.",
        "It feels as good as it looks.",
        "Trust me, once you try it, there is no going back.",
        "It is perfect as a gift, or just for you.",
    ],
    "casual": [
        "The {colour} colour is really nice in person.",
        "{description}",
        "It does exactly what I need, nothing fancy.",
        "It is simple, it is solid, and it looks good.",
        "I keep using it every day, which says a lot.",
        "Not gonna lie, it is one of my favourite {category} picks.",
        "It just fits into my day without any fuss.",
        "Looks even better than the photos, to be fair.",
        "My friends keep asking about it.",
        "For the price, it is a really easy pick.",
    ],
    "professional": [
        "Finished in {colour}, it fits any setting.",
        "{description}",
        "Quality materials and careful details throughout.",
        "A reliable {category} choice for every day.",
        "Designed to look good and to perform just as well.",
        "Every detail has been considered.",
        "It combines a clean look with dependable everyday performance.",
        "Made for people who value quality.",
        "An easy choice for home, for work, or as a gift.",
        "It delivers consistent results, every time you use it.",
    ],
    "problem-solution": [
        "Most options look fine at first and then let you down.",
        "{name} is different.",
        "{description}",
        "The {colour} finish looks great and holds up.",
        "It is a {category} that simply does its job, day after day.",
        "No more compromises.",
        "It looks great, it feels solid, and it lasts.",
        "You get the quality you were looking for from day one.",
        "Finally, something that lives up to the photos.",
        "Less hassle, more of what you actually want.",
    ],
}

CTAS: dict[str, list[str]] = {
    "enthusiastic": [
        "Grab yours today!",
        "Get yours now, you will love it!",
        "Tap the link and get yours before it is gone!",
    ],
    "casual": [
        "Check it out.",
        "Link is below if you want one.",
        "Worth a look, seriously.",
    ],
    "professional": [
        "Order yours today.",
        "Discover it now at the link.",
        "Available now. Order today.",
    ],
    "problem-solution": [
        "Try it today.",
        "Make the switch today.",
        "Get yours and see the difference.",
    ],
}


@dataclass(frozen=True)
class ScriptResult:
    """A written script and what it was written from."""

    script: str
    product_name: str
    product_description: str
    duration_seconds: int
    word_count: int
    word_budget: int
    tone: str
    details: dict[str, Any] = field(default_factory=dict)


def count_words(text: str) -> int:
    return len(_WORD.findall(text))


def word_budget(duration_seconds: float) -> int:
    """Words that fit ``duration_seconds`` of speech at the voice's measured rate."""
    return max(3, round((duration_seconds - FIXED_SECONDS) * WORDS_PER_SECOND))


_GENERIC = ("", "other", "product", "portrait", "photo", "people")


def _name_from_facts(facts: dict[str, Any]) -> str:
    """Text read on the product when it looks like a name (one to three words with letters),
    else "the <category>"."""
    for line in facts.get("text") or []:
        words = _clean(str(line)).split()
        letters = sum(ch.isalpha() for ch in "".join(words))
        if 1 <= len(words) <= 3 and letters >= 3 and all(len(w) <= 20 for w in words):
            return " ".join(w if w.isupper() else w.capitalize() for w in words)
    category = str(facts.get("category") or "").strip().lower()
    return f"the {category}" if category not in _GENERIC else "this one"


def _clean(text: str) -> str:
    return " ".join(text.replace("\n", " ").split()).strip()


def _capitalise(text: str) -> str:
    """Upper-case the first letter of every sentence."""
    parts = re.split(r"((?:^|[.!?]\s+))", text)
    return "".join(p[:1].upper() + p[1:] if i % 2 == 0 else p for i, p in enumerate(parts))


def _fill(template: str, values: dict[str, str]) -> str:
    return _capitalise(_clean(template.format(**values)))


def _short_description(description: str, limit: int = 14) -> str:
    """The first sentence of a description, at most ``limit`` words, ending with a period."""
    first = re.split(r"(?<=[.!?])\s", _clean(description))[0] if description else ""
    words = first.split()
    if not words:
        return ""
    if len(words) > limit:
        words = words[:limit]
    sentence = " ".join(words).rstrip(",;:")
    return sentence if sentence[-1:] in ".!?" else sentence + "."


def write_script(
    *,
    product_name: str | None,
    product_description: str | None,
    duration_seconds: int,
    tone: str,
    facts: dict[str, Any] | None,
    seed: int = 0,
) -> ScriptResult:
    """A script for ``duration_seconds`` of speech in ``tone`` (see the module notes).
    ``facts`` may carry ``category``, ``colors`` (names), ``description`` and ``text`` (words
    read on the product) from the image analysis; given values win over facts."""
    if tone not in TONES:
        raise ValueError(f"tone must be one of {', '.join(TONES)}")
    if not MIN_SECONDS <= duration_seconds <= MAX_SECONDS:
        raise ValueError(f"duration_seconds must be {MIN_SECONDS} to {MAX_SECONDS}")
    facts = facts or {}
    name = _clean(product_name or "") or _name_from_facts(facts)
    given = _clean(product_description or "")
    # the analysis's description is factual ("a product photo of ..."): reported, never spoken
    description = given or _clean(str(facts.get("description") or ""))
    colours = [str(c) for c in facts.get("colors") or [] if str(c).strip()]
    category = str(facts.get("category") or "").strip().lower()
    if category in _GENERIC:
        category = "product"
    values = {
        "name": name,
        "colour": colours[0] if colours else "clean",
        "category": category,
        "description": _short_description(given),
    }
    rng = random.Random(f"{seed}:{tone}:{duration_seconds}:{name}")
    budget = word_budget(duration_seconds)

    hooks = [_fill(h, values) for h in HOOKS[tone]]
    ctas = [_fill(c, values) for c in CTAS[tone]]
    benefits = []
    for template in BENEFITS[tone]:
        if "{description}" in template and not values["description"]:
            continue
        if "{colour}" in template and not colours:
            continue
        line = _fill(template, values)
        if line and line not in benefits:
            benefits.append(line)
    rng.shuffle(hooks)
    rng.shuffle(ctas)
    rng.shuffle(benefits)

    best: tuple[float, list[str]] | None = None
    for hook in hooks:
        for cta in ctas:
            base = count_words(hook) + count_words(cta)
            for k in range(0, len(benefits) + 1):
                for chosen in itertools.combinations(benefits, k):
                    words = base + sum(count_words(b) for b in chosen)
                    # prefer at least one benefit line when it fits; then the closest length
                    miss = abs(words - budget) / budget + (0.05 if k == 0 else 0.0)
                    if best is None or miss < best[0] - 1e-9:
                        best = (miss, [hook, *chosen, cta])
                if k >= 1 and best is not None and best[0] < 0.05:
                    break
    assert best is not None
    lines = best[1]
    # past about 40 seconds the pools run out: the script is then shorter than the budget
    # rather than repetitive (word_count says so)
    script = " ".join(lines)
    return ScriptResult(
        script=script,
        product_name=name,
        product_description=description,
        duration_seconds=duration_seconds,
        word_count=count_words(script),
        word_budget=budget,
        tone=tone,
        details={
            "method": METHOD,
            "words_per_second": WORDS_PER_SECOND,
            "word_budget": budget,
            "facts_used": sorted(k for k in ("category", "colors", "description") if facts.get(k)),
        },
    )


def facts_from_analysis(analysis: dict[str, Any], category: str | None = None) -> dict[str, Any]:
    """The facts a script uses, from ``analyze_image``'s result."""
    colours = [str(c.get("name")) for c in analysis.get("colors", []) if c.get("name")]
    return {
        "category": category or "",
        "colors": colours[:2],
        "description": str(analysis.get("description") or ""),
        "text": list(analysis.get("text_detected") or [])[:3],
        "categories": list(analysis.get("categories") or []),
    }
