"""Reading a background description ("a marble countertop", "blue background", "sunset beach",
"pink to orange gradient") into one of the procedural backdrop painters.

This is keyword matching, not language understanding: the prompt's words are looked up in a
table of backdrop terms and colour names. Places and materials named by a noun (marble, beach,
city lights, ...; the first one in the prompt wins) beat places implied by an adjective
(sunny, tropical, rustic), which beat generic looks (glossy, studio, gradient, plain). A prompt
with no known term gets a neutral studio sweep, and the result says so (``fallback``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from pixelmill.engines.runtime.backdrops import (
    Backdrop,
    Painter,
    linear_gradient,
    solid_color,
    studio_sweep,
)
from pixelmill.engines.runtime.palette import Color, find_colors
from pixelmill.engines.runtime.scenery import SCENES, SceneSpec
from pixelmill.engines.runtime.shadows import ShadowKind

# (pattern, scene). Places and materials named by a noun: a match here decides the backdrop,
# and the first one in the prompt wins ("a wooden table in a garden" is a table).
_PLACES: tuple[tuple[str, str], ...] = (
    (r"marble|granite|quartz", "marble countertop"),
    (r"kitchen|subway tiles?|tiled?", "kitchen counter"),
    (r"wood(?:en)?|oak|walnut|timber|table ?top|table|desk", "wooden table"),
    (r"concrete|cement|stone|slate", "concrete surface"),
    (r"linen|fabric|cloth|textile|cotton", "linen flat lay"),
    (r"kraft|paper|cardboard", "kraft paper flat lay"),
    (r"velvet|satin|jewel(?:le)?ry box", "velvet display"),
    (r"beach|sand|ocean|sea|seaside|coast|island", "beach sand"),
    (r"sunset|sunrise|dusk|dawn|golden hour", "sunset sky"),
    (r"sky|clouds?", "sunny sky"),
    (r"forest|garden|nature|park|leaves|foliage|greenery|plants?|trees?|jungle|grass",
     "garden bokeh"),
    (r"city|street|neon|bokeh|lights|skyline", "city lights bokeh"),
    (r"loft", "loft interior"),
    (r"living ?room|room|interior|house|apartment|sofa", "living room"),
    (r"shelf|shelves|window", "shelf with window light"),
)  # fmt: skip

# Places implied by an adjective ("sunny", "tropical"): used only when no noun above matched,
# so "sunny beach" is a beach and "rustic kitchen" a kitchen.
_MOODS: tuple[tuple[str, str], ...] = (
    (r"tropical|summer|vacation|holiday", "beach sand"),
    (r"sunny|outdoors?|daylight", "sunny sky"),
    (r"rustic|farmhouse", "wooden table"),
    (r"industrial|urban", "concrete surface"),
    (r"night|nighttime|christmas|party|festive", "city lights bokeh"),
    (r"spring|botanical|natural", "garden bokeh"),
    (r"cozy|cosy|home|homely", "living room"),
)  # fmt: skip

# Generic looks: used only when no place or mood is named; earlier rows win.
_LOOKS: tuple[tuple[str, str], ...] = (
    (r"glossy|reflective|mirror|gloss", "black gloss surface"),
    (r"dark|moody|dramatic|low key", "dark studio sweep"),
    (r"gradient|ombre|fade", "colour gradient"),
    (r"spot ?light|soft light|glow|halo", "soft light backdrop"),
    (r"studio|sweep|seamless|professional|e-?commerce|catalog(?:ue)?|product shot", "studio sweep"),
    (r"solid|flat|plain|clean|simple|minimal(?:ist)?|neutral|empty", "solid colour"),
)  # fmt: skip

_GLOSS = re.compile(r"\b(?:glossy|reflective|reflection|mirror|polished|shiny)\b")


def _compile(table: tuple[tuple[str, str], ...]) -> list[tuple[re.Pattern[str], str]]:
    return [(re.compile(r"\b(?:" + p + r")\b"), scene) for p, scene in table]


_PLACE_RES = _compile(_PLACES)
_MOOD_RES = _compile(_MOODS)
_LOOK_RES = _compile(_LOOKS)

_STUDIO = SceneSpec("studio sweep", studio_sweep, (), 0.6, 0.86)
_SOLID = SceneSpec("solid colour", solid_color, (), 0.6, 0.86)


class TwoColourGradient:
    """A painter for "X to Y gradient": top-to-bottom ``first`` -> ``second``."""

    def __init__(self, first: Color, second: Color) -> None:
        self.first, self.second = first, second

    def __call__(
        self, h: int, w: int, rng: np.random.Generator, *, horizon: float, color: Color | None
    ) -> Backdrop:
        del rng, color  # fully determined by the two colours
        rgb = linear_gradient(h, w, self.first, self.second, 90.0)
        light = tuple(
            0.75 + 0.25 * (a + b) / 2 for a, b in zip(self.first, self.second, strict=True)
        )
        return Backdrop(rgb, horizon, (light[0], light[1], light[2]), "two-colour gradient")


@dataclass(frozen=True)
class BackdropRequest:
    """What a prompt asked for. ``spec`` gives the painter and the geometry defaults;
    ``color`` tints it; ``painter`` overrides ``spec.painter`` (two-colour gradients)."""

    spec: SceneSpec
    description: str
    color: Color | None = None
    painter: Painter | None = None
    reflection: float = 0.0
    matched_terms: list[str] = field(default_factory=list)
    fallback: bool = False

    @property
    def shadow(self) -> ShadowKind:
        return self.spec.shadow

    def paint(self, h: int, w: int, rng: np.random.Generator, horizon: float) -> Backdrop:
        """Paint this backdrop at ``h`` × ``w`` with the floor starting at ``horizon``."""
        painter = self.painter or self.spec.painter
        return painter(h, w, rng, horizon=horizon, color=self.color)


def _first_match(
    text: str, table: list[tuple[re.Pattern[str], str]], by_position: bool = True
) -> tuple[int, str, str] | None:
    """The matching row whose match comes first in ``text`` (or, with ``by_position=False``,
    the first matching row of the table), as ``(position, matched text, scene)``."""
    best: tuple[int, str, str] | None = None
    for pattern, scene in table:
        m = pattern.search(text)
        if m is None:
            continue
        if not by_position:
            return (m.start(), m.group(0), scene)
        if best is None or m.start() < best[0]:
            best = (m.start(), m.group(0), scene)
    return best


def _spec(scene: str) -> SceneSpec:
    if scene == _STUDIO.name:
        return _STUDIO
    if scene == _SOLID.name:
        return _SOLID
    return SCENES[scene]


def parse_backdrop_prompt(prompt: str) -> BackdropRequest:
    """Map a free-text background description to a backdrop (see the module docstring)."""
    text = " ".join(prompt.lower().replace("-", " ").split())
    colours = find_colors(text)
    terms: list[str] = []
    # Colour phrases are blanked out before looking for places and looks, so "sky blue" is a
    # colour (not a sky) and "dark green" does not also read as "dark".
    rest = text
    for phrase, _, pos in colours:
        rest = rest[:pos] + " " * len(phrase) + rest[pos + len(phrase) :]
    chosen = (
        _first_match(rest, _PLACE_RES)
        or _first_match(rest, _MOOD_RES)
        or _first_match(rest, _LOOK_RES, by_position=False)
    )
    gloss = _GLOSS.search(rest)
    first_colour = colours[0][1] if colours else None
    terms += [c[0] for c in colours]

    if chosen is not None:
        _, term, scene = chosen
        terms.insert(0, term)
        spec = _spec(scene)
        painter: Painter | None = None
        description = spec.name
        if scene == "colour gradient" and len(colours) >= 2:
            painter = TwoColourGradient(colours[0][1], colours[1][1])
            description = f"{colours[0][0]} to {colours[1][0]} gradient"
        elif first_colour is not None:
            description = f"{colours[0][0]} {spec.name}"
        reflection = spec.reflection
        if gloss and gloss.group(0) not in terms:
            terms.append(gloss.group(0))
        if gloss:
            reflection = max(reflection, 0.25)
        return BackdropRequest(
            spec, description, first_colour, painter, reflection, terms, fallback=False
        )

    if len(colours) >= 2:
        painter = TwoColourGradient(colours[0][1], colours[1][1])
        spec = SCENES["colour gradient"]
        description = f"{colours[0][0]} to {colours[1][0]} gradient"
        return BackdropRequest(spec, description, None, painter, 0.0, terms)
    if first_colour is not None:
        return BackdropRequest(
            _SOLID, f"{colours[0][0]} solid colour", first_colour, None, 0.0, terms
        )
    return BackdropRequest(
        _STUDIO,
        "neutral studio sweep (no known backdrop term in the prompt)",
        None,
        None,
        0.0,
        [],
        fallback=True,
    )


KNOWN_TERMS = (
    "colours by name (red, navy, pastel pink, ...), two colours for a gradient, studio, plain, "
    "gradient, glossy, marble, wood, concrete, kitchen, linen, paper, velvet, beach, sunset, "
    "sky, garden/forest, city lights/bokeh, living room, loft, shelf/window"
)
"""A human-readable list of what :func:`parse_backdrop_prompt` understands."""
