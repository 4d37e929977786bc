"""Colour names and small colour helpers shared by the backdrop painters, the replace-background
prompt parser and the edit engine's recolour step.

Colours are RGB triples of floats in 0..1, sRGB-encoded (the same encoding as the uint8 images
the engines exchange, divided by 255).
"""

from __future__ import annotations

import re

Color = tuple[float, float, float]
"""An sRGB colour, each channel 0..1."""


def hex_color(code: str) -> Color:
    """``"#rrggbb"`` -> an sRGB :data:`Color`."""
    code = code.lstrip("#")
    if len(code) != 6:
        raise ValueError(f"expected #rrggbb, got {code!r}")
    return (int(code[0:2], 16) / 255.0, int(code[2:4], 16) / 255.0, int(code[4:6], 16) / 255.0)


NAMED_COLORS: dict[str, Color] = {
    name: hex_color(code)
    for name, code in (
        ("white", "#f4f4f2"),
        ("black", "#121214"),
        ("grey", "#8c8c8e"),
        ("gray", "#8c8c8e"),
        ("silver", "#c4c6c9"),
        ("charcoal", "#36383c"),
        ("red", "#c8202a"),
        ("crimson", "#b3122e"),
        ("burgundy", "#6e1a2c"),
        ("maroon", "#6a1b1b"),
        ("pink", "#ee8fb2"),
        ("magenta", "#c42a9a"),
        ("purple", "#7442a8"),
        ("violet", "#8a5cd0"),
        ("lavender", "#c4b5e6"),
        ("blue", "#2563c9"),
        ("navy", "#1c2b55"),
        ("sky blue", "#86bff0"),
        ("light blue", "#9ecbf2"),
        ("dark blue", "#173a7a"),
        ("cyan", "#25b8cf"),
        ("teal", "#1f8a88"),
        ("turquoise", "#36c2b4"),
        ("mint", "#a8e2c8"),
        ("green", "#2f9a4a"),
        ("emerald", "#1d7a52"),
        ("olive", "#6f7a32"),
        ("sage", "#a7b79a"),
        ("lime", "#9bd13c"),
        ("yellow", "#f2cf3a"),
        ("gold", "#d4a937"),
        ("mustard", "#c9a227"),
        ("orange", "#ec7a26"),
        ("peach", "#f6c1a0"),
        ("coral", "#f07a64"),
        ("beige", "#e4d6bf"),
        ("cream", "#f3ead6"),
        ("ivory", "#f5f0e1"),
        ("tan", "#c9a77c"),
        ("brown", "#7a5033"),
        ("chocolate", "#4e2f1d"),
        ("terracotta", "#c1623f"),
    )
}
"""Colour words a prompt may use. Multi-word names (``"sky blue"``) are matched before their
last word, so "sky blue" is not read as "blue"."""

_MODIFIERS: dict[str, tuple[float, float]] = {
    # (mix towards white, mix towards black)
    "light": (0.45, 0.0),
    "pale": (0.55, 0.0),
    "pastel": (0.6, 0.0),
    "soft": (0.35, 0.0),
    "dark": (0.0, 0.45),
    "deep": (0.0, 0.3),
}

_NAMES_BY_LENGTH = sorted(NAMED_COLORS, key=len, reverse=True)
COLOR_PHRASE = (
    r"(?:(?:"
    + "|".join(_MODIFIERS)
    + r")[\s-]+)?(?:"
    + "|".join(re.escape(n) for n in _NAMES_BY_LENGTH)
    + r")"
)
"""A regular expression (no groups) matching one colour phrase, e.g. "navy", "light pink"."""
_COLOR_RE = re.compile(
    r"\b(?:(?P<mod>"
    + "|".join(_MODIFIERS)
    + r")[\s-]+)?(?P<name>"
    + "|".join(re.escape(n) for n in _NAMES_BY_LENGTH)
    + r")\b"
)


def mix(a: Color, b: Color, t: float) -> Color:
    """Linear interpolation ``a`` -> ``b`` by ``t`` (0..1), per channel."""
    return (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t)


def scale(c: Color, k: float) -> Color:
    """``c`` times ``k``, clipped to 0..1."""
    return (min(1.0, c[0] * k), min(1.0, c[1] * k), min(1.0, c[2] * k))


def find_colors(text: str) -> list[tuple[str, Color, int]]:
    """Every colour phrase in ``text`` (lower-cased by the caller), in order of appearance, as
    ``(phrase, colour, position)``; a modifier ("light", "dark", "pastel", ...) just before a
    colour name lightens or darkens it."""
    found: list[tuple[str, Color, int]] = []
    for m in _COLOR_RE.finditer(text):
        color = NAMED_COLORS[m.group("name")]
        mod = m.group("mod")
        if mod:
            to_white, to_black = _MODIFIERS[mod]
            color = mix(color, (1.0, 1.0, 1.0), to_white)
            color = mix(color, (0.0, 0.0, 0.0), to_black)
        found.append((m.group(0), color, m.start()))
    return found


def color_of(phrase: str) -> Color:
    """The colour of one phrase such as ``"light pink"`` (``KeyError`` if it names none)."""
    found = find_colors(phrase.lower())
    if not found:
        raise KeyError(phrase)
    return found[0][1]


def luminance(c: Color) -> float:
    """Rec. 709 luma of an sRGB colour (a cheap brightness measure, not linear-light)."""
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
