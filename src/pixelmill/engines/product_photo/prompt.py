"""Reading a product-photo or try-on prompt: which scenes it asks for, and the framing,
placement and hand wishes it states. A fixed vocabulary, no language model: every word it
cannot use is returned in :attr:`PromptReading.unrecognised` (the engines report them in
``details.unrecognised``), never silently dropped; grammar words are neither used nor
reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Framing = Literal["full", "half"]
Hand = Literal["left", "right"]
Placement = Literal["held", "worn", "hip", "floor", "front", "counter"]

SCENE_WORDS: dict[str, tuple[str, ...]] = {
    # studio looks
    "studio": ("white studio sweep",), "white": ("white studio sweep",),
    "clean": ("white studio sweep",), "minimal": ("white studio sweep",),
    "minimalist": ("white studio sweep",), "plain": ("white studio sweep",),
    "grey": ("light grey studio sweep",), "gray": ("light grey studio sweep",),
    "neutral": ("light grey studio sweep",), "pastel": ("pastel studio sweep",),
    "pink": ("pastel studio sweep",), "dark": ("dark studio sweep",),
    "moody": ("dark studio sweep",), "dramatic": ("dark studio sweep",),
    "black": ("black gloss surface",), "glossy": ("black gloss surface",),
    "gloss": ("black gloss surface",), "luxury": ("black gloss surface",),
    "premium": ("black gloss surface",), "gradient": ("colour gradient",),
    "colorful": ("colour gradient",), "colourful": ("colour gradient",),
    "soft light": ("soft light backdrop",), "soft": ("soft light backdrop",),
    "airy": ("soft light backdrop",), "bright": ("soft light backdrop",),
    # surfaces and rooms
    "marble": ("marble countertop",), "table": ("wooden table",),
    "wooden": ("wooden table",), "wood": ("wooden table",), "cafe": ("wooden table",),
    "café": ("wooden table",), "coffee shop": ("wooden table",),
    "restaurant": ("wooden table",), "dining": ("wooden table",),
    "concrete": ("concrete surface",), "industrial": ("concrete surface",),
    "urban": ("concrete surface",), "street": ("concrete surface",),
    "kitchen": ("kitchen counter",), "cooking": ("kitchen counter",),
    "counter": ("kitchen counter",), "bakery": ("kitchen counter",),
    "home": ("living room",), "living room": ("living room",), "cozy": ("living room",),
    "cosy": ("living room",), "interior": ("living room",), "lounge": ("living room",),
    "house": ("living room",), "indoor": ("living room",), "indoors": ("living room",),
    "loft": ("loft interior",), "office": ("loft interior",), "workspace": ("loft interior",),
    "work": ("loft interior",), "apartment": ("loft interior",), "modern": ("loft interior",),
    # outdoors
    "outdoor": ("garden bokeh", "sunny sky"), "outdoors": ("garden bokeh", "sunny sky"),
    "outside": ("garden bokeh", "sunny sky"), "sky": ("sunny sky",), "sunny": ("sunny sky",),
    "summer": ("sunny sky", "beach sand"), "sunset": ("sunset sky",),
    "golden hour": ("sunset sky",), "evening": ("sunset sky",), "dusk": ("sunset sky",),
    "beach": ("beach sand",), "sea": ("beach sand",), "ocean": ("beach sand",),
    "seaside": ("beach sand",), "sand": ("beach sand",), "vacation": ("beach sand",),
    "holiday": ("beach sand",), "tropical": ("beach sand",), "city": ("city lights bokeh",),
    "night": ("city lights bokeh",), "nightlife": ("city lights bokeh",),
    "lights": ("city lights bokeh",), "downtown": ("city lights bokeh",),
    "garden": ("garden bokeh",), "park": ("garden bokeh",), "nature": ("garden bokeh",),
    "green": ("garden bokeh",), "spring": ("garden bokeh",), "forest": ("garden bokeh",),
}  # fmt: skip
"""Prompt words and phrases -> the scenes (of the scenes capability) they ask for."""

FRAMING_WORDS: dict[str, Framing] = {
    "full body": "full", "full-body": "full", "full length": "full", "full-length": "full",
    "whole body": "full", "head to toe": "full", "half body": "half", "half-body": "half",
    "upper body": "half", "waist up": "half", "close-up": "half", "closeup": "half",
    "close up": "half", "portrait": "half",
}  # fmt: skip

PLACEMENT_WORDS: dict[str, Placement] = {
    "holding": "held", "holds": "held", "held": "held", "in hand": "held", "in her hand": "held",
    "in his hand": "held", "in their hand": "held", "carrying": "held", "carries": "held",
    "beside": "floor", "next to": "floor", "on the floor": "floor", "on the ground": "floor",
    "wearing": "worn", "worn": "worn", "around the neck": "worn", "on the hip": "hip",
    "over the shoulder": "hip",
}  # fmt: skip

HAND_WORDS: dict[str, Hand] = {
    "left hand": "left",
    "right hand": "right",
    "left": "left",
    "right": "right",
}

_STOP_TEXT = """
a an the and or with without in on at of for to by from as into is are be being her his their
it its them they she he him i me my we our you your this that these those some very quite
slightly bit little nice beautiful stylish photo photos photograph photography picture pictures
image images shot shots
scene scenes setting background backdrop product products item items model models person
people avatar style styled look looking lifestyle showing shows show featuring feature
presenting presents posing pose standing stands stand while using uses use who which where
please make create generate render
"""
STOPWORDS = frozenset(_STOP_TEXT.split())
"""Grammar and filler words: neither used nor reported."""


@dataclass(frozen=True)
class PromptReading:
    """What a prompt asks for. ``scenes`` in the order the prompt names them (no repeats);
    ``keywords`` the words and phrases used; ``unrecognised`` the rest (stop words aside)."""

    scenes: tuple[str, ...] = ()
    framing: Framing | None = None
    placement: Placement | None = None
    hand: Hand | None = None
    keywords: tuple[str, ...] = ()
    unrecognised: tuple[str, ...] = ()


def _alternation(words: dict[str, object]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


def read_prompt(prompt: str | None) -> PromptReading:
    """Read ``prompt`` against the fixed vocabulary (longest phrases first)."""
    if not prompt:
        return PromptReading()
    low = prompt.lower()
    used = [False] * len(low)
    keywords: list[tuple[int, str]] = []

    def take(words: dict[str, object]) -> list[re.Match[str]]:
        found = []
        pattern = rf"(?<![\w-])(?:{_alternation(words)})(?![\w-])"
        for m in re.finditer(pattern, low):
            if not any(used[m.start() : m.end()]):
                found.append(m)
                used[m.start() : m.end()] = [True] * (m.end() - m.start())
                keywords.append((m.start(), m.group(0)))
        return found

    framing: Framing | None = None
    for m in take(dict(FRAMING_WORDS)):
        framing = FRAMING_WORDS[m.group(0)]
    hand: Hand | None = None
    for m in take(dict(HAND_WORDS)):
        hand = HAND_WORDS[m.group(0)]
    placement: Placement | None = None
    for m in take(dict(PLACEMENT_WORDS)):
        placement = PLACEMENT_WORDS[m.group(0)]
    scenes: list[str] = []
    for m in sorted(take(dict(SCENE_WORDS)), key=lambda m: m.start()):
        for scene in SCENE_WORDS[m.group(0)]:
            if scene not in scenes:
                scenes.append(scene)
    unrecognised: list[str] = []
    for m in re.finditer(r"[^\W\d_][\w'-]*", low):
        word = m.group(0)
        if any(used[m.start() : m.end()]) or word in STOPWORDS or word in unrecognised:
            continue
        unrecognised.append(word)
    return PromptReading(
        scenes=tuple(scenes),
        framing=framing,
        placement=placement,
        hand=hand,
        keywords=tuple(k for _, k in sorted(keywords)),
        unrecognised=tuple(unrecognised),
    )
