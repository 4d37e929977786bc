"""The ``avatar_reference`` engine: clean avatar variants of the person in a photo.

:meth:`ReferenceAvatarEngine.plan` finds the person (MediaPipe pose and face detection, see
:mod:`~pixelmill.engines.avatar.person`) and refuses a photo without one, before anything is
charged; it then settles each variant: a framing the photo supports (full body, half body,
head and shoulders), a studio backdrop and, when ``additional_details`` asks for a look, a
style for every other variant. Rendering a variant cuts the person out (once per plan, shared by
its variants), re-lights them (exposure towards a studio key, a soft directional key light from
the left, a rim light on the right edge, colour harmonised with the backdrop), frames and places
them on the backdrop with the scenes capability's compositing, and applies the style.

No generative model runs: the person's own pixels are what the avatar shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar, NamedTuple

import cv2
import numpy as np
from pydantic import BaseModel, Field

from pixelmill.engines.avatar.attributes import STOPWORDS, color_named
from pixelmill.engines.avatar.person import Framing, Person, cut_out, find_person
from pixelmill.engines.base import (
    EngineInputs,
    EngineResult,
    MultiImageBaseEngine,
    OutputImage,
    PlannedImage,
)
from pixelmill.engines.runtime.backdrops import Backdrop, linear_gradient, studio_sweep
from pixelmill.engines.runtime.layers import (
    Layer,
    decontaminate_image,
    harmonise,
    paste,
    place_layer,
    to_uint8,
)
from pixelmill.engines.runtime.lazy import Lazy
from pixelmill.engines.runtime.palette import Color, mix
from pixelmill.engines.runtime.person import load as load_person_models
from pixelmill.engines.runtime.segmentation import U2NETP
from pixelmill.engines.runtime.shadows import add_floor_shadow
from pixelmill.engines.style import apply_style

METHOD = (
    "the person cut out of the photo (MediaPipe selfie and pose segmentation fused with the "
    "U²-Net-p salient mask, guided-filter edges), re-lit (exposure, soft key light, rim light, "
    "colour harmonised), framed {framings} on procedural studio backdrops{style}; "
    "no generative model: the person's own pixels are shown"
)

STYLE_WORDS: dict[str, str] = {
    "cartoon": "anime", "cartoonish": "anime", "anime": "anime", "manga": "anime",
    "toon": "anime", "comic": "pop_art", "pop art": "pop_art", "pop-art": "pop_art",
    "sketch": "sketch", "pencil": "sketch", "drawing": "sketch", "drawn": "sketch",
    "oil": "oil_painting", "oil painting": "oil_painting", "painting": "oil_painting",
    "painted": "oil_painting", "watercolor": "watercolor", "watercolour": "watercolor",
    "vintage": "vintage", "retro": "vintage", "cinematic": "cinematic", "film": "cinematic",
    "movie": "cinematic", "cyberpunk": "cyberpunk", "neon": "cyberpunk",
}  # fmt: skip
"""Words in ``additional_details`` that ask for one of the style capability's looks."""

FRAMING_WORDS: dict[str, Framing] = {
    "full body": "full", "full-body": "full", "full length": "full", "full-length": "full",
    "whole body": "full", "half body": "half", "half-body": "half", "upper body": "half",
    "waist up": "half", "torso": "half", "headshot": "head", "head shot": "head",
    "head and shoulders": "head", "close-up": "head", "closeup": "head", "face": "head",
    "profile picture": "head", "profile photo": "head",
}  # fmt: skip

_BACKDROPS: dict[str, Color | None] = {
    "white studio": (0.96, 0.96, 0.955),
    "light grey studio": (0.8, 0.805, 0.815),
    "pastel studio": None,
    "colour gradient": None,
    "dark studio": (0.25, 0.255, 0.27),
}
"""Backdrops in the order variants use them (``None``: chosen per variant from the seed)."""

_BACKDROP_WORDS = {
    "white": "white studio", "light": "white studio", "bright": "white studio",
    "grey": "light grey studio", "gray": "light grey studio", "neutral": "light grey studio",
    "pastel": "pastel studio", "gradient": "colour gradient", "colorful": "colour gradient",
    "colourful": "colour gradient", "dark": "dark studio", "black": "dark studio",
    "moody": "dark studio", "studio": "white studio",
}  # fmt: skip

_PASTELS: tuple[Color, ...] = ((0.96, 0.82, 0.85), (0.8, 0.9, 0.96), (0.83, 0.94, 0.86),
                               (0.98, 0.89, 0.78), (0.88, 0.84, 0.96))  # fmt: skip

_COLOR_RE = (
    r"(?:(?:light|pale|pastel|soft|dark|deep)[\s-]+)?(?:white|black|grey|gray|silver|red|pink|"
    r"purple|violet|lavender|blue|navy|sky blue|cyan|teal|turquoise|mint|green|sage|yellow|"
    r"gold|mustard|orange|peach|coral|beige|cream|tan|brown|terracotta)"
)


class ReferenceAvatarParams(BaseModel):
    """Options for ``avatar_reference``."""

    num_outputs: int = Field(1, ge=1, le=30, description="how many avatar variants")
    seed: int = Field(0, ge=0, le=2**32 - 1, description="varies backdrops and their colours")
    height: int = Field(
        1024, ge=256, le=2048, description="canvas height in pixels; the width is 3/4 of it"
    )
    additional_details: str | None = Field(
        None,
        max_length=2000,
        description=(
            "optional wishes: a look (cartoon, sketch, oil painting, watercolor, pop art, "
            "vintage, cinematic, cyberpunk), a framing (full body, half body, headshot) or a "
            "backdrop (white, grey, pastel, gradient, dark, or a colour: 'blue background'); "
            "other words are listed in details.unrecognised"
        ),
    )


@dataclass(frozen=True)
class Wishes:
    """What ``additional_details`` asked for."""

    style: str | None = None
    framing: Framing | None = None
    backdrop: str | None = None
    backdrop_color: tuple[str, Color] | None = None
    unrecognised: tuple[str, ...] = ()


def _alternation(words: dict[str, Any]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


def read_details(text: str | None) -> Wishes:
    """Read ``additional_details``; words it cannot use are returned, not dropped."""
    if not text:
        return Wishes()
    low = text.lower()
    used = [False] * len(low)

    def take(pattern: str) -> list[re.Match[str]]:
        found = []
        for m in re.finditer(rf"(?<![a-z-])(?:{pattern})(?![a-z-])", low):
            if not any(used[m.start() : m.end()]):
                found.append(m)
                used[m.start() : m.end()] = [True] * (m.end() - m.start())
        return found

    color = None
    backdrop = None
    for m in take(rf"{_COLOR_RE}[\s-]+(?:background|backdrop|studio|wall)"):
        color = color_named(re.sub(r"[\s-]+(?:background|backdrop|studio|wall)$", "", m.group(0)))
    framing: Framing | None = None
    for m in take(_alternation(FRAMING_WORDS)):
        framing = FRAMING_WORDS[m.group(0)]
    style = None
    for m in take(_alternation(STYLE_WORDS)):
        style = STYLE_WORDS[m.group(0)]
    for m in take(_alternation(_BACKDROP_WORDS)):
        backdrop = _BACKDROP_WORDS[m.group(0)]
    leftovers: list[str] = []
    for m in re.finditer(r"[a-z][a-z'-]*", low):
        word = m.group(0)
        if any(used[m.start() : m.end()]) or word in STOPWORDS or word in leftovers:
            continue
        if word in ("style", "look", "version", "versions", "variant", "variants", "make"):
            continue
        leftovers.append(word)
    return Wishes(style, framing, backdrop, color, tuple(leftovers))


@dataclass(frozen=True)
class Variant:
    """One planned output."""

    position: int
    framing: Framing
    backdrop: str
    style: str | None
    seed: int

    @property
    def label(self) -> str:
        shot = {"full": "full body", "half": "half body", "head": "headshot"}[self.framing]
        parts = [shot, self.backdrop]
        if self.style:
            parts.append(self.style.replace("_", " "))
        return ", ".join(parts)


def plan_variants(person: Person, wishes: Wishes, n: int, seed: int) -> list[Variant]:
    """Framings cycle through what the photo supports (a wished framing first, when the
    photo supports it); backdrops cycle through the studio set (a wished one first); a wished
    style goes on outputs 0, 2, 4, ...."""
    framings = list(person.framings)
    if wishes.framing in framings:
        framings.remove(wishes.framing)
        framings.insert(0, wishes.framing)
    names = list(_BACKDROPS)
    start = int(np.random.default_rng([seed, 11]).integers(len(names)))
    names = names[start:] + names[:start]
    custom = f"{wishes.backdrop_color[0]} studio" if wishes.backdrop_color else None
    wished = custom or wishes.backdrop
    if wished:
        names = [wished, *[b for b in names if b != wished]]
    out = []
    for i in range(n):
        style = wishes.style if wishes.style and i % 2 == 0 else None
        out.append(Variant(i, framings[i % len(framings)], names[i % len(names)], style, seed + i))
    return out


@dataclass(frozen=True)
class CutOut:
    """The person as premultiplied colour and alpha on the working image."""

    premult: np.ndarray[Any, np.dtype[np.float32]]
    alpha: np.ndarray[Any, np.dtype[np.float32]]


def _make_cutout(person: Person) -> CutOut:
    alpha = cut_out(person)
    rgb = decontaminate_image(person.rgb, alpha).astype(np.float32) / 255.0
    return CutOut(np.ascontiguousarray(rgb * alpha[..., None]), alpha)


def _backdrop(variant: Variant, wishes: Wishes, h: int, w: int) -> Backdrop:
    rng = np.random.default_rng([variant.seed, 12])
    horizon = 0.72 if variant.framing == "full" else 0.95
    if variant.backdrop not in _BACKDROPS and wishes.backdrop_color is not None:
        color: Color | None = wishes.backdrop_color[1]
    else:
        color = _BACKDROPS.get(variant.backdrop)
    if variant.backdrop == "pastel studio":
        color = _PASTELS[int(rng.integers(len(_PASTELS)))]
    if variant.backdrop == "colour gradient":
        i, j = rng.choice(len(_PASTELS), size=2, replace=False)
        first, second = _PASTELS[int(i)], _PASTELS[int(j)]
        rgb = linear_gradient(h, w, first, second, float(rng.uniform(50.0, 80.0)))
        return Backdrop(np.asarray(rgb, np.float32), horizon, mix(first, second, 0.5), "gradient")
    return studio_sweep(h, w, rng, horizon=horizon, color=color)


def _frame(
    person: Person, alpha: np.ndarray[Any, np.dtype[np.float32]], framing: Framing, h: int, w: int
) -> tuple[float, float, float]:
    """Scale and offset ``(s, ox, oy)`` mapping working-image pixels to the canvas for a
    framing: the head near the top; the feet on the floor (full), the hips (half) or the
    shoulders (head) at the bottom edge; never a photo border inside the frame."""
    ih, iw = alpha.shape
    rows = np.flatnonzero((alpha > 0.5).any(axis=1))
    cols = np.flatnonzero((alpha > 0.5).any(axis=0))
    top, bottom_px = float(rows[0]), float(rows[-1] + 1)
    lm = person.landmarks
    shoulders = [lm[k] for k in ("left_shoulder", "right_shoulder") if k in lm]
    hips = [lm[k] for k in ("left_hip", "right_hip") if k in lm]
    face = person.face
    if shoulders:
        shoulder_y = float(np.mean([p[1] for p in shoulders]))
        cx = float(np.mean([p[0] for p in shoulders]))
    elif face is not None:
        shoulder_y = face.y + face.h * 1.6
        cx = face.x + face.w / 2
    else:
        shoulder_y = top + 0.3 * (bottom_px - top)
        cx = float(cols[0] + cols[-1]) / 2
    if "nose" in lm and framing == "head":
        cx = lm["nose"][0]
    if framing == "full":
        top_frac, bottom_frac, bottom = 0.06, 0.94, bottom_px
        cx = float(cols[0] + cols[-1]) / 2
    elif framing == "half":
        top_frac, bottom_frac = 0.07, 1.0
        if hips:
            hip_y = float(np.mean([p[1] for p in hips]))
            bottom = hip_y + 0.2 * (hip_y - shoulder_y)
        else:
            bottom = shoulder_y + 1.5 * (shoulder_y - top)
    else:
        top_frac, bottom_frac = 0.1, 1.0
        bottom = shoulder_y + 0.45 * max(shoulder_y - top, 1.0)
    bottom = min(bottom, float(ih))
    s = (bottom_frac - top_frac) * h / max(bottom - top, 1.0)
    ox = w / 2 - s * cx
    oy = top_frac * h - s * top
    # Where the person runs off the photo, that photo edge must lie on or beyond the frame.
    band = slice(int(top), int(bottom))
    if float(alpha[band, : max(1, iw // 100)].max(initial=0.0)) > 0.5:
        ox = min(ox, 0.0)
    if float(alpha[band, iw - max(1, iw // 100) :].max(initial=0.0)) > 0.5:
        ox = max(ox, w - s * iw)
    if float(alpha[: max(1, ih // 100)].max(initial=0.0)) > 0.5:
        oy = min(oy, 0.0)
    if float(alpha[ih - max(1, ih // 100) :].max(initial=0.0)) > 0.5:
        oy = max(oy, h - s * ih)
    return s, ox, oy


def relight(layer: Layer, light: Color) -> Layer:
    """Studio re-lighting of the person: exposure moved towards a mid-tone key (gain capped
    at 0.9..1.3), a soft key light from the upper left (about ±8 %), and a warm-white rim light
    along the right-hand edge of the silhouette."""
    a = layer.alpha
    solid = a > 0.5
    if not solid.any():
        return layer
    colour = layer.premult / np.maximum(a, 1e-4)[..., None]
    luma = colour @ np.asarray((0.2126, 0.7152, 0.0722), dtype=np.float32)
    mean = float(np.mean(luma[solid]))
    gain = float(np.clip((0.5 / max(mean, 1e-3)) ** 0.5, 0.9, 1.3))
    h, w = a.shape
    xs = np.linspace(1.0, -1.0, w, dtype=np.float32)[None, :]
    ys = np.linspace(1.0, -1.0, h, dtype=np.float32)[:, None]
    key = 1.0 + 0.08 * xs + 0.04 * ys
    colour = colour * (gain * key)[..., None]
    r = max(2, round(0.012 * max(h, w)))
    inner = cv2.erode(a, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1)))
    rim = cv2.GaussianBlur(np.clip(a - inner, 0.0, 1.0), (0, 0), r * 0.7)
    rim *= np.clip(-xs, 0.0, 1.0) * 0.9 + 0.1
    rim_colour = np.asarray(mix(light, (1.0, 0.97, 0.92), 0.5), dtype=np.float32)
    colour = colour + (0.35 * rim)[..., None] * (rim_colour - colour)
    premult = np.clip(colour, 0.0, 1.0) * a[..., None]
    return Layer(np.asarray(premult, np.float32), a, layer.x, layer.y)


def render_variant(
    person: Person, cutout: Lazy[CutOut], wishes: Wishes, variant: Variant, height: int
) -> OutputImage:
    """Render one planned variant: ``height`` × ``3/4·height`` RGB."""
    h, w = height, round(height * 3 / 4)
    cut = cutout.get()
    s, ox, oy = _frame(person, cut.alpha, variant.framing, h, w)
    backdrop = _backdrop(variant, wishes, h, w)
    layer = relight(place_layer(cut.premult, cut.alpha, s, (ox, oy), (h, w)), backdrop.light)
    layer = harmonise(layer, backdrop.rgb, backdrop.light, 0.15)
    canvas = backdrop.rgb.copy()
    if variant.framing == "full":
        add_floor_shadow(canvas, layer, 0.9)
    paste(canvas, layer)
    pixels = to_uint8(canvas, np.random.default_rng([variant.seed, 13]))
    if variant.style:
        pixels = apply_style(pixels, variant.style, 0.9)
    landmarks: dict[str, list[float]] = {}
    for name, (x, y) in person.landmarks.items():
        px, py = ox + s * x, oy + s * y
        if 0.0 <= px < w and 0.0 <= py < h:
            landmarks[name] = [round(px, 2), round(py, 2)]
    data: dict[str, Any] = {
        "landmarks": landmarks,
        "attributes": {
            "framing": variant.framing,
            "backdrop": variant.backdrop,
            "style": variant.style,
        },
        "gender": "unspecified",
    }
    return OutputImage(pixels, label=variant.label, data=data)


class _Plan(NamedTuple):
    planned: list[PlannedImage]
    variants: list[Variant]
    wishes: Wishes


class ReferenceAvatarEngine(MultiImageBaseEngine[ReferenceAvatarParams]):
    """``avatar_reference``: ``num_outputs`` studio avatar variants of the person in a photo.

    A :class:`~pixelmill.engines.base.MultiImageEngine`: :meth:`plan` detects the person
    (raising :class:`~pixelmill.engines.base.EngineError` when there is none) and plans the
    variants; the cut-out is made on the first render and shared by the plan's variants."""

    name: ClassVar[str] = "avatar_reference"
    Params: ClassVar[type[BaseModel]] = ReferenceAvatarParams
    models = (U2NETP,)

    def _load(self) -> None:
        super()._load()
        load_person_models()

    def _plan(self, inputs: EngineInputs, params: ReferenceAvatarParams) -> _Plan:
        """The variants of this call (raises ``EngineError`` when no person is found)."""
        person = find_person(inputs.image)
        wishes = read_details(params.additional_details)
        variants = plan_variants(person, wishes, params.num_outputs, params.seed)
        cutout: Lazy[CutOut] = Lazy(partial(_make_cutout, person))
        planned = [
            PlannedImage(
                position=v.position,
                label=v.label,
                render=partial(render_variant, person, cutout, wishes, v, params.height),
            )
            for v in variants
        ]
        return _Plan(planned, variants, wishes)

    def _run(self, inputs: EngineInputs, params: ReferenceAvatarParams) -> EngineResult:
        planned, variants, wishes = self._plan(inputs, params)
        images = [p.render() for p in planned]
        framings = sorted({v.framing for v in variants}, key=["full", "half", "head"].index)
        style = f", '{wishes.style}' look on every other variant" if wishes.style else ""
        details: dict[str, Any] = {
            "method": METHOD.format(framings="/".join(framings), style=style),
            "framings": [v.framing for v in variants],
            "backdrops": [v.backdrop for v in variants],
            "style": wishes.style,
            "unrecognised": list(wishes.unrecognised),
            "seed": params.seed,
            "width": round(params.height * 3 / 4),
            "height": params.height,
        }
        return EngineResult(images, details)
