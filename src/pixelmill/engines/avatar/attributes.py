"""What a guided-avatar prompt asks for, and the complete look drawn for one output.

:func:`read_request` reads a free-text prompt (and the optional ``characteristics`` mapping)
with a small fixed vocabulary: presentation, age group, skin tone, hair colour and style,
garments with their colours, pose, build, accessories, backdrop, outfit style and a name.
Everything it recognises is recorded in :class:`Request`; every other word that carries
meaning is returned in ``unrecognised`` so the caller can tell the user (never silently
dropped). :func:`resolve` then fills every attribute the request left open from a seeded
random generator, giving the :class:`Look` one illustration is drawn from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

import numpy as np

from pixelmill.engines.runtime.palette import Color, find_colors, hex_color, mix

Presentation = Literal["female", "male", "unspecified"]
AgeGroup = Literal["child", "teen", "young adult", "adult", "middle-aged", "senior"]
Pose = Literal[
    "standing", "waving", "hands on hips", "hands in pockets", "presenting", "celebrating"
]
Build = Literal["slim", "average", "athletic", "plus-size"]
Expression = Literal["smile", "neutral"]

AGE_GROUPS: tuple[AgeGroup, ...] = (
    "child",
    "teen",
    "young adult",
    "adult",
    "middle-aged",
    "senior",
)
POSES: tuple[Pose, ...] = (
    "standing", "waving", "hands on hips", "hands in pockets", "presenting", "celebrating"
)  # fmt: skip
BUILDS: tuple[Build, ...] = ("slim", "average", "athletic", "plus-size")

SKIN_TONES: dict[str, Color] = {
    "fair": hex_color("#f6d5c0"),
    "light": hex_color("#eebf9c"),
    "medium": hex_color("#d9a27c"),
    "olive": hex_color("#c69066"),
    "tan": hex_color("#b47a50"),
    "brown": hex_color("#8c5a3a"),
    "dark brown": hex_color("#6b4028"),
    "deep": hex_color("#4b2c1c"),
}
"""Skin tones, lightest first."""

HAIR_COLORS: dict[str, Color] = {
    "black": hex_color("#1f1b1c"),
    "dark brown": hex_color("#3b2519"),
    "brown": hex_color("#6b4027"),
    "light brown": hex_color("#94653d"),
    "blonde": hex_color("#e2bd6f"),
    "platinum": hex_color("#eee3c8"),
    "red": hex_color("#b4442a"),
    "auburn": hex_color("#8c3a24"),
    "grey": hex_color("#a3a3a6"),
    "white": hex_color("#ebe9e4"),
    "pink": hex_color("#ee8fb2"),
    "blue": hex_color("#3f6fd2"),
    "purple": hex_color("#7b4cb4"),
    "green": hex_color("#3b9a5c"),
}

HAIR_STYLES = (
    "short", "buzz", "bald", "long", "wavy", "curly", "short curly", "bob", "ponytail", "bun",
    "afro", "braids",
)  # fmt: skip

TOPS = ("t-shirt", "shirt", "polo", "tank top", "sweater", "hoodie", "jacket", "blazer", "coat")
"""Upper garments; ``dress`` and ``suit`` are whole outfits."""
BOTTOMS = ("jeans", "trousers", "shorts", "skirt")
BACKDROPS = ("studio", "park", "city", "beach", "office", "sunset", "night")
ACCESSORIES = ("glasses", "sunglasses", "beard", "moustache", "earrings", "freckles", "cap")

_DENIM = hex_color("#3d5f8f")


@dataclass
class Request:
    """What a prompt (and ``characteristics``) asked for; ``None`` = not said."""

    name: str | None = None
    presentation: Presentation | None = None
    age: AgeGroup | None = None
    age_years: int | None = None
    skin_tone: str | None = None
    hair_color: str | None = None
    hair_style: str | None = None
    hair_length: str | None = None
    top: str | None = None
    top_color: tuple[str, Color] | None = None
    top_pattern: tuple[str, Color] | None = None
    long_hem: bool | None = None
    bottom: str | None = None
    bottom_color: tuple[str, Color] | None = None
    shoe: str | None = None
    shoe_color: tuple[str, Color] | None = None
    outfit_style: str | None = None
    pose: Pose | None = None
    build: Build | None = None
    expression: Expression | None = None
    accessories: set[str] = field(default_factory=set)
    no_accessories: set[str] = field(default_factory=set)
    backdrop: str | None = None
    backdrop_color: tuple[str, Color] | None = None

    def understood(self) -> dict[str, Any]:
        """The attributes that were asked for, JSON-safe (what ``details.attributes`` shows)."""
        out: dict[str, Any] = {}
        for key in ("name", "presentation", "age", "age_years", "skin_tone", "hair_color",
                    "hair_style", "top", "bottom", "shoe", "outfit_style", "pose", "build",
                    "expression", "backdrop"):  # fmt: skip
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        for key in ("top_color", "top_pattern", "bottom_color", "shoe_color", "backdrop_color"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value[0]
        if self.accessories:
            out["accessories"] = sorted(self.accessories)
        return out


@dataclass(frozen=True)
class Look:
    """Every attribute of one drawn avatar (nothing left open)."""

    name: str
    presentation: Presentation
    age: AgeGroup
    skin_tone: str
    hair_color: str
    hair_style: str
    top: str
    top_color: tuple[str, Color]
    stripes: tuple[str, Color] | None
    long_hem: bool | None
    bottom: str | None
    bottom_color: tuple[str, Color]
    shoe: str
    shoe_color: tuple[str, Color]
    inner_color: tuple[str, Color]
    outfit_style: str
    pose: Pose
    build: Build
    expression: Expression
    accessories: frozenset[str]
    backdrop: str
    backdrop_color: tuple[str, Color]

    @property
    def skin(self) -> Color:
        return SKIN_TONES[self.skin_tone]

    @property
    def hair(self) -> Color:
        return HAIR_COLORS[self.hair_color]

    def attributes(self) -> dict[str, Any]:
        """JSON-safe description of the drawn avatar (``OutputImage.data["attributes"]``)."""
        return {
            "name": self.name,
            "presentation": self.presentation,
            "age": self.age,
            "skin_tone": self.skin_tone,
            "hair_color": self.hair_color,
            "hair_style": self.hair_style,
            "top": self.top,
            "top_color": self.top_color[0],
            "stripes": self.stripes[0] if self.stripes else None,
            "long_hem": self.long_hem,
            "bottom": self.bottom,
            "bottom_color": self.bottom_color[0] if self.bottom else None,
            "shoes": self.shoe,
            "shoe_color": self.shoe_color[0],
            "outfit_style": self.outfit_style,
            "pose": self.pose,
            "build": self.build,
            "expression": self.expression,
            "accessories": sorted(self.accessories),
            "backdrop": self.backdrop,
            "backdrop_color": self.backdrop_color[0],
        }


# --- reading the prompt ----------------------------------------------------------------

_WORD = re.compile(r"[^\W\d_][^\W\d_']*(?:-[^\W\d_]+)*|\d+")

_STOP_TEXT = """
a an the and or with without in on at of for to by from as into wearing wears wear worn
dressed who is are has have having her his their its them they she he him this that some
very quite slightly bit little pair style styled styling illustration illustrated avatar
avatars portrait picture image drawing character full body full-body flat vector looking
look looks camera posing pose background backdrop setting scene outfit clothes clothing
colored coloured color colour years year old aged age tone toned complexion skin skinned
hair haired hairstyle cut plus also nice cute beautiful handsome pretty stylish modern
simple clean friendly person people human model figure someone somebody standing front
facing view shot like kind type
"""
STOPWORDS = frozenset(_STOP_TEXT.split())
"""Words that carry no attribute of their own (grammar, or words only meaningful next to an
attribute that the readers consume): they are neither used nor reported."""

_FEMALE = (
    r"woman|women|female|girl|lady|ladies|feminine|she|her|mother|mom|mum|grandmother|grandma|gal"
)
_MALE = r"man|men|male|boy|guy|gentleman|masculine|he|his|father|dad|grandfather|grandpa|dude"
_NEUTRAL = r"non-binary|nonbinary|enby|androgynous|gender-neutral|genderless|agender"

_AGE_WORDS: dict[str, AgeGroup] = {
    "child": "child", "children": "child", "kid": "child", "kids": "child", "toddler": "child",
    "boy": "child", "girl": "child", "teen": "teen", "teenager": "teen",
    "teenage": "teen", "adolescent": "teen", "young": "young adult", "young adult": "young adult",
    "middle aged": "middle-aged", "student": "young adult",
    "adult": "adult", "grown-up": "adult", "middle-aged": "middle-aged", "mature": "middle-aged",
    "senior": "senior", "elderly": "senior", "old": "senior", "older": "senior",
    "grandmother": "senior", "grandfather": "senior", "grandma": "senior", "grandpa": "senior",
    "retired": "senior", "aging": "senior",
}  # fmt: skip

_SKIN_WORDS: dict[str, str] = {
    "very fair": "fair", "very light": "fair", "porcelain": "fair", "pale": "fair",
    "fair": "fair", "light": "light", "light-medium": "light", "medium": "medium",
    "olive": "olive", "tan": "tan", "tanned": "tan", "light brown": "tan", "brown": "brown",
    "medium brown": "brown", "dark brown": "dark brown", "dark": "dark brown", "deep": "deep",
    "very dark": "deep", "ebony": "deep", "black": "deep",
}  # fmt: skip

_HAIR_COLOR_WORDS: dict[str, str] = {
    "jet black": "black", "black": "black", "dark brown": "dark brown", "dark": "dark brown",
    "brunette": "dark brown", "brown": "brown", "chestnut": "brown", "light brown": "light brown",
    "dirty blonde": "light brown", "honey": "light brown", "blonde": "blonde", "blond": "blonde",
    "golden": "blonde", "yellow": "blonde", "platinum": "platinum", "platinum blonde": "platinum",
    "red": "red", "ginger": "red", "copper": "red", "orange": "red", "auburn": "auburn",
    "grey": "grey", "gray": "grey", "silver": "grey", "salt-and-pepper": "grey", "white": "white",
    "pink": "pink", "blue": "blue", "purple": "purple", "violet": "purple", "lavender": "purple",
    "green": "green", "teal": "green",
}  # fmt: skip
_HAIR_COLOR_ALONE = {"blonde": "blonde", "blond": "blonde", "brunette": "dark brown",
                     "redhead": "red", "ginger": "red", "red-haired": "red"}  # fmt: skip

_HAIR_STYLE_WORDS: dict[str, str] = {
    "long": "long", "straight": "long", "shoulder-length": "long", "flowing": "long",
    "wavy": "wavy", "waves": "wavy", "curly": "curly", "curls": "curly", "coily": "afro",
    "short": "short", "cropped": "short", "crew": "short", "pixie": "short", "buzz": "buzz",
    "buzzed": "buzz", "shaved": "buzz", "bob": "bob", "bobbed": "bob", "ponytail": "ponytail",
    "pony": "ponytail", "bun": "bun", "top-knot": "bun", "afro": "afro", "braids": "braids",
    "braided": "braids", "plaits": "braids", "bald": "bald",
}  # fmt: skip
_HAIR_STYLE_ALONE = {"ponytail", "bun", "afro", "braids", "plaits", "bald", "bob", "pixie",
                     "curls", "buzzcut", "buzz-cut", "crew-cut"}  # fmt: skip

_GARMENTS: dict[str, str] = {
    "t-shirt": "t-shirt", "tshirt": "t-shirt", "tee": "t-shirt", "t shirt": "t-shirt",
    "shirt": "shirt", "button-up": "shirt", "button-down": "shirt", "blouse": "shirt",
    "polo": "polo", "tank top": "tank top", "tank": "tank top", "vest top": "tank top",
    "top": "t-shirt", "sweater": "sweater", "jumper": "sweater", "pullover": "sweater",
    "cardigan": "sweater", "sweatshirt": "sweater", "knit": "sweater", "turtleneck": "sweater",
    "hoodie": "hoodie", "hoody": "hoodie", "jacket": "jacket", "denim jacket": "jacket",
    "leather jacket": "jacket", "bomber": "jacket", "blazer": "blazer", "coat": "coat",
    "trench coat": "coat", "raincoat": "coat", "overcoat": "coat", "parka": "coat",
    "dress": "dress",
    "gown": "dress", "sundress": "dress", "suit": "suit", "tuxedo": "suit",
    "jeans": "jeans", "denim": "jeans", "trousers": "trousers", "pants": "trousers",
    "chinos": "trousers", "slacks": "trousers", "joggers": "trousers", "sweatpants": "trousers",
    "leggings": "trousers", "shorts": "shorts", "skirt": "skirt", "miniskirt": "skirt",
    "sneakers": "sneakers", "trainers": "sneakers", "shoes": "shoes", "boots": "boots",
    "heels": "heels", "loafers": "shoes", "sandals": "shoes",
    "outfit": "outfit", "clothes": "outfit", "clothing": "outfit", "uniform": "outfit",
}  # fmt: skip
_SHOES = frozenset({"sneakers", "shoes", "boots", "heels"})

_POSE_WORDS: dict[str, Pose] = {
    "standing": "standing", "stands": "standing", "neutral pose": "standing",
    "waving": "waving", "wave": "waving", "waves": "waving", "greeting": "waving",
    "saying hello": "waving", "hands on hips": "hands on hips", "hands on her hips":
    "hands on hips", "hands on his hips": "hands on hips", "hands on their hips":
    "hands on hips", "confident": "hands on hips", "power pose": "hands on hips",
    "hands in pockets": "hands in pockets", "hands in her pockets": "hands in pockets",
    "hands in his pockets": "hands in pockets", "hands in their pockets": "hands in pockets",
    "relaxed": "hands in pockets", "presenting": "presenting", "pointing": "presenting",
    "showing": "presenting", "holding": "presenting", "offering": "presenting",
    "celebrating": "celebrating", "cheering": "celebrating", "arms raised": "celebrating",
    "arms up": "celebrating", "jumping": "celebrating", "excited": "celebrating",
}  # fmt: skip

_BUILD_WORDS: dict[str, Build] = {
    "slim": "slim", "thin": "slim", "slender": "slim", "skinny": "slim", "petite": "slim",
    "lean": "slim", "average": "average", "medium build": "average", "athletic": "athletic",
    "muscular": "athletic", "fit": "athletic", "sporty build": "athletic", "broad": "athletic",
    "plus-size": "plus-size", "plus size": "plus-size", "curvy": "plus-size",
    "heavy": "plus-size", "chubby": "plus-size", "stocky": "plus-size", "large": "plus-size",
    "big": "plus-size", "overweight": "plus-size", "fat": "plus-size",
}  # fmt: skip

_STYLE_WORDS: dict[str, str] = {
    "casual": "casual", "everyday": "casual", "relaxed outfit": "casual", "streetwear":
    "casual", "business": "business", "professional": "business", "corporate": "business",
    "office look": "business", "formal": "elegant", "smart": "business", "sporty": "sporty",
    "sport": "sporty", "sports": "sporty", "gym": "sporty", "workout": "sporty",
    "elegant": "elegant", "chic": "elegant", "fancy": "elegant", "evening": "elegant",
}  # fmt: skip

_EXPRESSION_WORDS: dict[str, Expression] = {
    "smiling": "smile", "smile": "smile", "smiles": "smile", "happy": "smile",
    "cheerful": "smile", "joyful": "smile", "serious": "neutral", "neutral": "neutral",
    "calm": "neutral", "stern": "neutral",
}  # fmt: skip

_ACCESSORY_WORDS: dict[str, str] = {
    "glasses": "glasses", "eyeglasses": "glasses", "spectacles": "glasses",
    "specs": "glasses", "sunglasses": "sunglasses", "shades": "sunglasses",
    "beard": "beard", "bearded": "beard", "stubble": "beard", "goatee": "beard",
    "moustache": "moustache", "mustache": "moustache", "earrings": "earrings",
    "freckles": "freckles", "freckled": "freckles", "cap": "cap", "baseball cap": "cap",
}  # fmt: skip

_BACKDROP_WORDS: dict[str, str] = {
    "studio": "studio", "plain": "studio", "park": "park", "garden": "park", "outdoors": "park",
    "outdoor": "park", "outside": "park", "nature": "park", "forest": "park", "city": "city",
    "street": "city", "urban": "city", "downtown": "city", "town": "city", "beach": "beach",
    "seaside": "beach", "sea": "beach", "ocean": "beach", "summer": "beach", "office": "office",
    "workplace": "office", "indoors": "office", "indoor": "office", "room": "office",
    "sunset": "sunset", "dusk": "sunset", "evening sky": "sunset", "night": "night",
    "nighttime": "night", "stars": "night", "gradient": "studio",
}  # fmt: skip


def _alternation(words: Mapping[str, object] | set[str] | frozenset[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_SEP = r"[\s-]+"


class _Reader:
    """The lower-cased text with a record of which characters a reader has used."""

    def __init__(self, text: str) -> None:
        self.original = text
        self.text = text.lower().replace("’", "'")
        self.used = [False] * len(self.text)

    def free(self, start: int, end: int) -> bool:
        return not any(self.used[start:end])

    def take(self, pattern: str) -> list[re.Match[str]]:
        """Matches of ``pattern`` (word-bounded) on characters no earlier reader used; marks
        them used."""
        found = []
        for m in re.finditer(rf"(?<![a-z0-9'-])(?:{pattern})(?![a-z0-9'-])", self.text):
            if self.free(m.start(), m.end()):
                found.append(m)
                self.use(m.start(), m.end())
        return found

    def use(self, start: int, end: int) -> None:
        for i in range(start, end):
            self.used[i] = True

    def leftovers(self) -> list[str]:
        """Meaningful words no reader used, in order, each once."""
        out: list[str] = []
        for m in _WORD.finditer(self.text):
            if any(self.used[m.start() : m.end()]):
                continue
            word = m.group(0)
            if word in STOPWORDS or word.rstrip("s") in STOPWORDS or word in out:
                continue
            out.append(word)
        return out


_COLOR_ALT = (
    r"(?:(?:light|pale|pastel|soft|dark|deep|bright)[\s-]+)?(?:"
    + _alternation(
        {
            "white", "black", "grey", "gray", "silver", "charcoal", "red", "crimson",
            "burgundy", "maroon", "pink", "magenta", "purple", "violet", "lavender", "blue",
            "navy", "sky blue", "light blue", "dark blue", "cyan", "teal", "turquoise", "mint",
            "green", "emerald", "olive", "sage", "lime", "yellow", "gold", "mustard", "orange",
            "peach", "coral", "beige", "cream", "ivory", "tan", "brown", "chocolate",
            "terracotta", "khaki", "denim", "camel", "rust", "plum", "wine",
        }
    )
    + r")"
)  # fmt: skip
"""A clothing/backdrop colour phrase (the palette's names plus a few garment colours)."""

_EXTRA_COLORS: dict[str, Color] = {
    "khaki": hex_color("#b5a27a"),
    "denim": _DENIM,
    "camel": hex_color("#c19a6b"),
    "rust": hex_color("#a4462a"),
    "plum": hex_color("#6b3358"),
    "wine": hex_color("#6d1f33"),
}


def color_named(phrase: str) -> tuple[str, Color]:
    """``(name, colour)`` for a colour phrase such as ``"light pink"`` or ``"khaki"``."""
    phrase = " ".join(phrase.replace("-", " ").split())
    found = find_colors(phrase)
    if found and found[0][0] == phrase:
        return phrase, found[0][1]
    last = phrase.split()[-1]
    base = _EXTRA_COLORS.get(last)
    if base is None:
        if not found:
            raise KeyError(phrase)
        return phrase, found[0][1]
    if phrase.startswith(("light", "pale", "pastel", "soft")):
        base = mix(base, (1.0, 1.0, 1.0), 0.45)
    elif phrase.startswith(("dark", "deep")):
        base = mix(base, (0.0, 0.0, 0.0), 0.4)
    return phrase, base


def _read_name(r: _Reader, req: Request) -> None:
    for m in r.take(r"(?:named|called|name is|name:)\s+[a-z][a-z'-]{1,20}"):
        word = r.original[m.start() : m.end()].split()[-1].strip(":")
        req.name = word[:1].upper() + word[1:].lower()


def _read_hair(r: _Reader, req: Request) -> None:
    colors = _alternation(_HAIR_COLOR_WORDS)
    styles = _alternation(_HAIR_STYLE_WORDS)
    descriptor = rf"(?:{colors}|{styles}|medium-length|medium|shiny|thick|natural)"
    for m in r.take(rf"(?:{descriptor}(?:,?{_SEP}|\s+and\s+))*{descriptor}{_SEP}hair(?:ed|style)?"):
        phrase = m.group(0)
        for cm in re.finditer(rf"(?<![a-z-])(?:{colors})(?![a-z-])", phrase):
            req.hair_color = _HAIR_COLOR_WORDS[cm.group(0)]
        for sm in re.finditer(rf"(?<![a-z-])(?:{styles})(?![a-z-])", phrase):
            style = _HAIR_STYLE_WORDS[sm.group(0)]
            if style in ("long", "short"):
                req.hair_length = style
            # "long curly hair": the shape word (curly) wins over the length word (long).
            if req.hair_style is None or req.hair_style in ("long", "short"):
                req.hair_style = style
    for m in r.take(rf"hair\s*(?::|is|in a|in)?\s*(?:{colors}|{styles})"):
        tail = m.group(0)
        for cm in re.finditer(rf"(?<![a-z-])(?:{colors})(?![a-z-])", tail):
            req.hair_color = _HAIR_COLOR_WORDS[cm.group(0)]
        for sm in re.finditer(rf"(?<![a-z-])(?:{styles})(?![a-z-])", tail):
            req.hair_style = _HAIR_STYLE_WORDS[sm.group(0)]
    alone = _alternation(_HAIR_STYLE_ALONE)
    for m in r.take(rf"(?:{colors}){_SEP}(?:{alone})"):
        parts = re.match(rf"({colors}){_SEP}({alone})", m.group(0))
        assert parts is not None
        req.hair_color = _HAIR_COLOR_WORDS[parts.group(1)]
        req.hair_style = _HAIR_STYLE_WORDS.get(parts.group(2), "short")
    for m in r.take(rf"(?:{colors}){_SEP}(?:beard|moustache|mustache|stubble|goatee)"):
        parts = re.match(rf"({colors}){_SEP}(\w+)", m.group(0))
        assert parts is not None
        req.hair_color = req.hair_color or _HAIR_COLOR_WORDS[parts.group(1)]
        req.accessories.add("moustache" if parts.group(2) in ("moustache", "mustache") else "beard")
    for m in r.take(_alternation(_HAIR_COLOR_ALONE)):
        req.hair_color = _HAIR_COLOR_ALONE[m.group(0)]
    for m in r.take(r"(?:buzz|crew|pixie)[\s-]?cut|shaved head|" + _alternation(_HAIR_STYLE_ALONE)):
        word = m.group(0)
        key = word.split()[0].split("-")[0]
        key = "buzz" if key in ("buzzcut", "shaved") else key
        req.hair_style = _HAIR_STYLE_WORDS.get(key, "short")


def _read_skin(r: _Reader, req: Request) -> None:
    tones = _alternation(_SKIN_WORDS)
    for m in r.take(rf"(?:{tones}){_SEP}(?:skin(?:ned)?|complexion|skin tone)"):
        tone = re.sub(rf"{_SEP}(?:skin(?:ned)?|complexion|skin tone)$", "", m.group(0))
        req.skin_tone = _SKIN_WORDS.get(tone) or _SKIN_WORDS[tone.replace("-", " ")]
    for m in r.take(rf"(?:skin|skin tone|complexion)\s*(?::|is|of)?\s*(?:{tones})"):
        tone = re.sub(r"^(?:skin tone|skin|complexion)\s*(?::|is|of)?\s*", "", m.group(0))
        req.skin_tone = _SKIN_WORDS[tone]


_MATERIALS = "striped|stripy|plain|denim|leather|wool|woolen|knitted|cotton|linen|silk"
_LEATHER = hex_color("#2b2624")


def _read_garments(r: _Reader, req: Request) -> None:
    garments = _alternation(_GARMENTS)
    colour = rf"(?:{_COLOR_ALT})(?:{_SEP}and{_SEP}(?:{_COLOR_ALT}))?{_SEP}"
    material = rf"(?:{_MATERIALS}){_SEP}"
    length = rf"(?:long|maxi|floor-length|ankle-length|midi|short|mini){_SEP}"
    for m in r.take(rf"(?:{length})?(?:{colour})?(?:{length})?(?:{material})?(?:{garments})"):
        text = m.group(0)
        gm = re.search(rf"(?:{garments})$", text)
        assert gm is not None
        kind = _GARMENTS[gm.group(0)]
        colours = [
            color_named(c.group(0))
            for c in re.finditer(rf"(?<![a-z-]){_COLOR_ALT}(?![a-z-])", text[: gm.start()])
        ]
        mm = re.search(rf"(?<![a-z-])(?:{_MATERIALS})(?![a-z-])", text)
        fabric = mm.group(0) if mm else ""
        if gm.group(0).startswith("denim") or fabric == "denim":
            colours = colours or [("denim", _DENIM)]
        elif gm.group(0).startswith("leather") or fabric == "leather":
            colours = colours or [("black leather", _LEATHER)]
        if kind in ("dress", "skirt", "coat"):
            lm = re.search(
                r"(?<![a-z-])(long|maxi|floor-length|ankle-length|midi|short|mini)", text
            )
            if lm is not None:
                req.long_hem = lm.group(1) not in ("short", "mini")
        if fabric in ("striped", "stripy") and kind not in BOTTOMS and kind not in _SHOES:
            second = colours[1] if len(colours) > 1 else ("white", (0.97, 0.97, 0.96))
            req.top_pattern = second
        _put_garment(req, kind, colours[0] if colours else None)


def _put_garment(req: Request, kind: str, color: tuple[str, Color] | None) -> None:
    if kind in _SHOES:
        req.shoe = kind
        req.shoe_color = color or req.shoe_color
    elif kind in BOTTOMS:
        req.bottom = kind
        req.bottom_color = color or req.bottom_color
    elif kind == "outfit":
        req.top_color = color or req.top_color
    else:
        if kind in ("dress", "suit"):
            req.bottom = None
        req.top = kind
        req.top_color = color or req.top_color


def _read_backdrop(r: _Reader, req: Request) -> None:
    places = _alternation(_BACKDROP_WORDS)
    for m in r.take(rf"(?:{_COLOR_ALT}){_SEP}(?:background|backdrop|studio|wall)"):
        cm = re.match(_COLOR_ALT, m.group(0))
        assert cm is not None
        req.backdrop_color = color_named(cm.group(0))
        req.backdrop = req.backdrop or "studio"
    for m in r.take(rf"(?:{places})"):
        req.backdrop = _BACKDROP_WORDS[m.group(0)]


def _read_words(r: _Reader, req: Request) -> None:
    """Presentation, age, pose, build, outfit style, expression and accessories."""
    for m in r.take("businesswoman|businessman|business woman|business man"):
        req.presentation = "female" if "woman" in m.group(0) else "male"
        req.outfit_style = req.outfit_style or "business"
    for m in r.take(rf"(?:no|without){_SEP}(?:{_alternation(_ACCESSORY_WORDS)})"):
        req.no_accessories.add(_ACCESSORY_WORDS[m.group(0).split()[-1]])
    for m in r.take(_alternation(_ACCESSORY_WORDS)):
        req.accessories.add(_ACCESSORY_WORDS[m.group(0)])
    for m in r.take(_alternation(_POSE_WORDS)):
        req.pose = _POSE_WORDS[m.group(0)]
    for m in r.take(_alternation(_BUILD_WORDS)):
        req.build = _BUILD_WORDS[m.group(0)]
    for m in r.take(_alternation(_STYLE_WORDS)):
        req.outfit_style = _STYLE_WORDS[m.group(0)]
    for m in r.take(_alternation(_EXPRESSION_WORDS)):
        req.expression = _EXPRESSION_WORDS[m.group(0)]
    for m in r.take(r"(\d{1,3})(?:[\s-]*(?:years?|yrs?|y/?o)(?:[\s-]*old)?|(?=\s*(?:,|$)))"
                    r"|in\s+(?:her|his|their)\s+(\d0)s|(\d0)s"):  # fmt: skip
        years = int(next(g for g in m.groups() if g))
        req.age_years = years
        req.age = age_group(years)
    if r.take(_NEUTRAL):
        req.presentation = "unspecified"
    kids = []
    for m in r.take(_alternation(_AGE_WORDS)):
        word = m.group(0)
        if word in ("boy", "girl", "grandmother", "grandfather", "grandma", "grandpa"):
            req.presentation = "female" if word.startswith(("girl", "grandm")) else "male"
        if word in ("boy", "girl"):
            kids.append(word)  # "teen boy" is a teen: boy/girl only say "child" on their own
        else:
            req.age = _AGE_WORDS[word]
    if kids and req.age is None:
        req.age = "child"
    if r.take(_FEMALE):
        req.presentation = "female"
    if r.take(_MALE):
        req.presentation = "male"


def age_group(years: int) -> AgeGroup:
    """The drawing's age group for an age in years."""
    if years < 13:
        return "child"
    if years < 18:
        return "teen"
    if years < 30:
        return "young adult"
    if years < 45:
        return "adult"
    if years < 62:
        return "middle-aged"
    return "senior"


def _read_leftover_colors(r: _Reader, req: Request) -> None:
    """A colour named on its own ("a man in green") dresses the top, if no top colour was
    given; otherwise it is left for the unrecognised list."""
    for m in r.take(rf"(?:in|wearing|all)\s+(?:{_COLOR_ALT})"):
        phrase = re.sub(r"^(?:in|wearing|all)\s+", "", m.group(0))
        if req.top_color is None:
            req.top_color = color_named(phrase)
        else:
            r.used[m.start() : m.end()] = [False] * (m.end() - m.start())


def parse_prompt(text: str) -> tuple[Request, list[str]]:
    """Read a prompt into a :class:`Request`; also returns the meaningful words it could not
    use."""
    req = Request()
    r = _Reader(text)
    _read_name(r, req)
    _read_hair(r, req)
    _read_skin(r, req)
    _read_garments(r, req)
    _read_backdrop(r, req)
    _read_words(r, req)
    _read_leftover_colors(r, req)
    return req, r.leftovers()


_CHARACTERISTIC_KEYS: dict[str, str] = {
    "gender": "presentation", "presentation": "presentation", "sex": "presentation",
    "age": "age", "age_group": "age", "skin": "skin_tone", "skin_tone": "skin_tone",
    "skin_color": "skin_tone", "skin_colour": "skin_tone", "complexion": "skin_tone",
    "hair_color": "hair_color", "hair_colour": "hair_color", "hair_style": "hair_style",
    "hairstyle": "hair_style", "hair": "hair", "clothing_color": "clothing_color",
    "clothing_colour": "clothing_color", "outfit_color": "clothing_color",
    "clothing_type": "clothing_type", "clothing": "clothing_type", "outfit": "clothing_type",
    "top": "clothing_type", "bottom": "clothing_type", "bottoms": "clothing_type",
    "shoes": "clothing_type", "pose": "pose", "background": "background",
    "backdrop": "background", "setting": "background", "build": "build", "body_type": "build",
    "body": "build", "accessories": "accessories", "accessory": "accessories", "name": "name",
    "style": "outfit_style", "outfit_style": "outfit_style", "expression": "expression",
}  # fmt: skip

_TEMPLATES: dict[str, str] = {
    "presentation": "{}",
    "age": "{}",
    "skin_tone": "{} skin",
    "hair_color": "{} hair",
    "hair_style": "{} hair",
    "hair": "{} hair",
    "clothing_color": "{} outfit",
    "clothing_type": "{}",
    "pose": "{}",
    "background": "{} background",
    "build": "{}",
    "accessories": "{}",
    "name": "named {}",
    "outfit_style": "{}",
    "expression": "{}",
}
_FIELDS_SET_BY: dict[str, tuple[str, ...]] = {
    "presentation": ("presentation",),
    "age": ("age",),
    "skin_tone": ("skin_tone",),
    "hair_color": ("hair_color",),
    "hair_style": ("hair_style", "hair_length"),
    "hair": ("hair_color", "hair_style", "hair_length"),
    "clothing_color": ("top_color",),
    "clothing_type": ("top", "bottom", "shoe", "top_pattern", "long_hem"),
    "pose": ("pose",),
    "background": ("backdrop", "backdrop_color"),
    "build": ("build",),
    "accessories": ("accessories",),
    "name": ("name",),
    "outfit_style": ("outfit_style",),
    "expression": ("expression",),
}


def _given(value: object) -> bool:
    return value is not None and value != set()


def read_request(
    prompt: str, characteristics: Mapping[str, str] | None
) -> tuple[Request, list[str]]:
    """The request from ``prompt`` with ``characteristics`` overriding it, and every word or
    characteristic that could not be used (``"eye_color: green"`` for a key we do not draw,
    ``"hair_style: mohawk"`` for a value we do not know)."""
    req, unrecognised = parse_prompt(prompt)
    for raw_key, raw_value in (characteristics or {}).items():
        key = _CHARACTERISTIC_KEYS.get(re.sub(r"[\s-]+", "_", raw_key.strip().lower()))
        value = str(raw_value).strip()
        if not value:
            continue
        if key is None:
            unrecognised.append(f"{raw_key}: {value}")
            continue
        if key == "age" and value.isdigit():
            req.age_years = int(value)
            req.age = age_group(int(value))
            continue
        if key == "presentation" and value.lower() in ("unspecified", "any", "neutral", "other"):
            req.presentation = "unspecified"
            continue
        part, rest = parse_prompt(_TEMPLATES[key].format(value))
        # Everything the value says is used ("clothing_type: red dress" sets the colour too);
        # it counts as understood when it set what its key is about.
        changed = any(_given(getattr(part, name)) for name in _FIELDS_SET_BY[key])
        for f in fields(Request):
            new = getattr(part, f.name)
            if not _given(new):
                continue
            if f.name in ("accessories", "no_accessories"):
                getattr(req, f.name).update(new)
            else:
                setattr(req, f.name, new)
                if f.name == "top" and new in ("dress", "suit"):
                    req.bottom = None
        if not changed or rest:
            unrecognised.append(f"{raw_key}: {value}")
    return req, unrecognised


# --- filling in what the request left open ---------------------------------------------

FEMALE_NAMES = ("Ava", "Maya", "Chloe", "Elena", "Grace", "Amara", "Sofia", "Mei", "Priya", "Zoe",
                "Nora", "Leila", "Hana", "Isabel", "Yara", "Lucia", "Ines", "Freya")  # fmt: skip
MALE_NAMES = ("Ben", "Daniel", "Felix", "Hiro", "Omar", "Lucas", "Kofi", "Mateo", "Arjun", "Leo",
              "Samuel", "Jonas", "Ravi", "Theo", "Malik", "Oscar", "Yusuf", "Emil")  # fmt: skip
NEUTRAL_NAMES = ("Alex", "Sam", "Robin", "Jordan", "Kai", "Riley", "Noor", "Quinn", "Ari", "Sasha")

_TOP_PALETTE = ("white", "black", "red", "coral", "mustard", "yellow", "green", "sage", "teal",
                "navy", "blue", "sky blue", "lavender", "pink", "terracotta", "orange", "purple",
                "grey", "cream", "emerald", "burgundy")  # fmt: skip
_BOTTOM_PALETTE = ("denim", "black", "charcoal", "navy", "beige", "khaki", "grey", "brown",
                   "cream", "olive")  # fmt: skip
_BACKDROP_PALETTE = ("peach", "mint", "lavender", "sky blue", "pale pink", "cream", "sage",
                     "pale yellow", "light grey", "coral", "pale blue", "beige")  # fmt: skip

_OUTFITS: dict[str, tuple[tuple[str, str | None], ...]] = {
    "casual": (("t-shirt", "jeans"), ("sweater", "jeans"), ("hoodie", "jeans"),
               ("t-shirt", "shorts"), ("shirt", "trousers"), ("jacket", "jeans"),
               ("polo", "trousers"), ("t-shirt", "skirt"), ("dress", None),
               ("sweater", "skirt"), ("tank top", "shorts")),
    "business": (("blazer", "trousers"), ("suit", None), ("shirt", "trousers"),
                 ("blazer", "skirt"), ("coat", "trousers")),
    "sporty": (("t-shirt", "shorts"), ("hoodie", "trousers"), ("tank top", "shorts"),
               ("jacket", "trousers")),
    "elegant": (("dress", None), ("suit", None), ("blazer", "trousers"), ("coat", "trousers"),
                ("shirt", "skirt")),
}  # fmt: skip
"""(top, bottom) pairs per outfit style; skirts and dresses are only drawn for presentations
that are not male unless asked for."""


def _pick(rng: np.random.Generator, items: tuple[str, ...] | list[str]) -> str:
    return items[int(rng.integers(len(items)))]


def _palette_color(name: str) -> tuple[str, Color]:
    return color_named(name)


def resolve(req: Request, rng: np.random.Generator) -> Look:
    """The complete look: what ``req`` asked for, the rest drawn from ``rng``."""
    presentation: Presentation = req.presentation or ("female" if rng.random() < 0.5 else "male")
    age: AgeGroup = req.age or ("young adult" if rng.random() < 0.45 else "adult")
    if req.age is None and rng.random() < 0.12:
        age = "middle-aged"
    skin_tone = req.skin_tone or _pick(rng, tuple(SKIN_TONES))

    if req.hair_color:
        hair_color = req.hair_color
    elif age == "senior":
        hair_color = _pick(rng, ("grey", "white", "grey"))
    else:
        naturals = ["black", "dark brown", "brown", "light brown", "blonde", "red", "auburn"]
        if SKIN_TONES[skin_tone][0] < 0.7:
            naturals = ["black", "black", "dark brown", "dark brown", "brown"]
        hair_color = _pick(rng, naturals)
        if age == "middle-aged" and rng.random() < 0.25:
            hair_color = "grey"

    if req.hair_style:
        hair_style = req.hair_style
        # Curls: short unless asked long (or worn long by default for women).
        if hair_style == "curly" and (
            req.hair_length == "short" or (presentation == "male" and req.hair_length is None)
        ):
            hair_style = "short curly"
        elif hair_style == "short curly" and req.hair_length == "long":
            hair_style = "curly"
    elif presentation == "female":
        hair_style = _pick(rng, ("long", "wavy", "bob", "ponytail", "bun", "curly", "afro",
                                 "braids", "long", "wavy"))  # fmt: skip
    elif presentation == "male":
        options = ["short", "short", "buzz", "short curly", "afro", "short"]
        if age in ("adult", "middle-aged", "senior"):
            options.append("bald")
        hair_style = _pick(rng, tuple(options))
    else:
        hair_style = _pick(rng, ("short", "bob", "short curly", "buzz", "afro"))

    styles = (
        ("casual", "casual", "sporty")
        if age == "child"
        else ("casual", "casual", "casual", "business")
    )
    outfit_style = req.outfit_style or _pick(rng, styles)
    top, bottom = _outfit(req, outfit_style, presentation, rng)
    if req.outfit_style is None and (req.top or req.bottom):
        # Garments that were asked for decide the style the label shows.
        outfit_style = "business" if top in ("suit", "blazer") else "casual"

    top_color = req.top_color or _palette_color(_pick(rng, _TOP_PALETTE))
    if top == "suit" and req.top_color is None:
        top_color = _palette_color(_pick(rng, ("navy", "charcoal", "grey", "black", "beige")))
    if bottom == "jeans":
        default_bottom = "denim" if rng.random() < 0.7 else _pick(rng, ("black", "light blue"))
    else:
        default_bottom = _pick(rng, _BOTTOM_PALETTE[1:])
    bottom_color = req.bottom_color or _palette_color(default_bottom)
    if bottom_color[1] == top_color[1] and req.bottom_color is None:
        bottom_color = _palette_color("charcoal" if top_color[0] != "charcoal" else "beige")
    inner = _palette_color("white" if top_color[0] not in ("white", "cream") else "sky blue")
    if top in ("jacket",) and rng.random() < 0.5:
        inner = _palette_color(_pick(rng, ("black", "grey", "mustard", "white", "cream")))

    shoe = req.shoe or ("shoes" if outfit_style in ("business", "elegant") else "sneakers")
    if req.shoe is None and presentation == "female" and outfit_style == "elegant":
        shoe = "heels"
    shoe_default = "white" if shoe == "sneakers" else _pick(rng, ("black", "brown", "chocolate"))
    shoe_color = req.shoe_color or _palette_color(shoe_default)

    pose: Pose = (
        req.pose or POSES[int(rng.choice(len(POSES), p=(0.4, 0.12, 0.16, 0.16, 0.1, 0.06)))]
    )
    if req.pose is None and pose == "hands in pockets" and (top == "dress" or bottom == "skirt"):
        pose = "standing"
    build: Build = req.build or BUILDS[int(rng.choice(4, p=(0.25, 0.45, 0.15, 0.15)))]
    expression: Expression = req.expression or "smile"

    accessories = set(req.accessories)
    grown_man = presentation == "male" and age not in ("child", "teen")
    if grown_man and not req.accessories and rng.random() < 0.3:
        accessories.add(_pick(rng, ("beard", "beard", "moustache")))
    if not req.accessories and rng.random() < (0.35 if age == "senior" else 0.12):
        accessories.add("glasses")
    if presentation == "female" and not req.accessories and rng.random() < 0.35:
        accessories.add("earrings")
    if not req.accessories and rng.random() < 0.1 and SKIN_TONES[skin_tone][0] > 0.85:
        accessories.add("freckles")
    accessories -= req.no_accessories

    backdrop = req.backdrop or "studio"
    backdrop_color = req.backdrop_color or _palette_color(_pick(rng, _BACKDROP_PALETTE))

    if req.name:
        name = req.name
    else:
        names = {"female": FEMALE_NAMES, "male": MALE_NAMES}.get(presentation, NEUTRAL_NAMES)
        name = _pick(rng, names)
    return Look(
        name=name,
        presentation=presentation,
        age=age,
        skin_tone=skin_tone,
        hair_color=hair_color,
        hair_style=hair_style,
        top=top,
        top_color=top_color,
        stripes=req.top_pattern,
        long_hem=req.long_hem,
        bottom=bottom,
        bottom_color=bottom_color,
        shoe=shoe,
        shoe_color=shoe_color,
        inner_color=inner,
        outfit_style=outfit_style,
        pose=pose,
        build=build,
        expression=expression,
        accessories=frozenset(accessories),
        backdrop=backdrop,
        backdrop_color=backdrop_color,
    )


def _outfit(
    req: Request, style: str, presentation: Presentation, rng: np.random.Generator
) -> tuple[str, str | None]:
    top = req.top
    bottom = req.bottom
    if top in ("dress", "suit"):
        return top, None
    if top is not None and bottom is not None:
        return top, bottom
    options = [
        (t, b)
        for t, b in _OUTFITS.get(style, _OUTFITS["casual"])
        if presentation != "male" or (t != "dress" and b != "skirt")
    ]
    if top is not None:
        matching = [o for o in options if o[0] == top] or [(top, None)]
        choice = matching[int(rng.integers(len(matching)))]
        return top, bottom or choice[1] or _pick(rng, ("jeans", "trousers"))
    if bottom is not None:
        matching = [o for o in options if o[1] == bottom] or [("t-shirt", bottom)]
        return matching[int(rng.integers(len(matching)))][0], bottom
    t, b = options[int(rng.integers(len(options)))]
    return t, b
