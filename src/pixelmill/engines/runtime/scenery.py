"""The scene catalogue: named product-photo scenes (a backdrop painter plus where the product
stands, how big it is, and what shadow/reflection it gets), which scenes suit which product
category, and rendering one scene for one cut-out.

Determinism: the scenes chosen depend only on ``(category, seed)`` (and a longer list starts
with the shorter one), and a rendered scene depends only on ``(cut-out, scene name, seed,
size)``, so a job runner can render scene *i* of a call on its own and get the same pixels as a
single call rendering all of them.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from pixelmill.categories import normalise_category
from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime import backdrops as bd
from pixelmill.engines.runtime.backdrops import Backdrop, Painter
from pixelmill.engines.runtime.layers import (
    Layer,
    crop_cutout,
    fit_box,
    harmonise,
    layer_from_cutout,
    paste,
    to_uint8,
)
from pixelmill.engines.runtime.palette import Color
from pixelmill.engines.runtime.shadows import (
    ShadowKind,
    add_drop_shadow,
    add_floor_shadow,
    add_reflection,
)
from pixelmill.engines.runtime.textures import Rgb


@dataclass(frozen=True)
class SceneSpec:
    """One scene. ``colors``: the painter's colour is picked from these per render (none: the
    painter's own choice). ``horizon``: where the floor starts; ``base``: where the product's
    bottom edge stands; ``height``: the product's height; all fractions of the image height.
    ``reflection``: floor gloss, 0 (matte) .. 1 (mirror)."""

    name: str
    painter: Painter
    colors: tuple[Color, ...] = ()
    horizon: float = 0.6
    base: float = 0.86
    height: float = 0.58
    shadow: ShadowKind = "floor"
    reflection: float = 0.0


_PASTELS: tuple[Color, ...] = (
    (0.96, 0.82, 0.85),
    (0.8, 0.9, 0.96),
    (0.83, 0.94, 0.86),
    (0.98, 0.89, 0.78),
    (0.88, 0.84, 0.96),
)

SCENES: dict[str, SceneSpec] = {
    s.name: s
    for s in (
        SceneSpec("white studio sweep", bd.studio_sweep, ((0.96, 0.96, 0.955),), 0.58, 0.85),
        SceneSpec("light grey studio sweep", bd.studio_sweep, ((0.8, 0.805, 0.815),), 0.58, 0.85),
        SceneSpec("pastel studio sweep", bd.studio_sweep, _PASTELS, 0.58, 0.85),
        SceneSpec(
            "dark studio sweep", bd.studio_sweep, ((0.25, 0.255, 0.27),), 0.58, 0.85,
            reflection=0.18,
        ),
        SceneSpec("black gloss surface", bd.glossy_black, (), 0.6, 0.86, reflection=0.32),
        SceneSpec("colour gradient", bd.gradient, (), 0.6, 0.85),
        SceneSpec("soft light backdrop", bd.soft_light, (), 0.6, 0.85),
        SceneSpec("marble countertop", bd.marble_counter, (), 0.55, 0.88, 0.55, reflection=0.1),
        SceneSpec("wooden table", bd.wooden_table, (), 0.55, 0.88, 0.55),
        SceneSpec("concrete surface", bd.concrete_surface, (), 0.55, 0.88, 0.55),
        SceneSpec("kitchen counter", bd.kitchen_counter, (), 0.58, 0.88, 0.52),
        SceneSpec("linen flat lay", bd.linen_flat_lay, (), 0.0, 0.82, 0.64, "drop"),
        SceneSpec("kraft paper flat lay", bd.paper_flat_lay, (), 0.0, 0.82, 0.64, "drop"),
        SceneSpec("velvet display", bd.velvet_display, (), 0.0, 0.8, 0.6, "drop"),
        SceneSpec("sunny sky", bd.sunny_sky, (), 0.68, 0.9, 0.58),
        SceneSpec("sunset sky", bd.sunset_sky, (), 0.66, 0.9, 0.58),
        SceneSpec("beach sand", bd.beach, (), 0.6, 0.88, 0.56),
        SceneSpec("city lights bokeh", bd.city_bokeh, (), 0.7, 0.9, 0.6, reflection=0.2),
        SceneSpec("garden bokeh", bd.garden_bokeh, (), 0.66, 0.9, 0.58),
        SceneSpec("living room", bd.living_room, (), 0.6, 0.93, 0.66),
        SceneSpec("loft interior", bd.loft_room, (), 0.6, 0.93, 0.66),
        SceneSpec("shelf with window light", bd.shelf, (), 0.7, 0.77, 0.5),
    )
}  # fmt: skip
"""Every scene, by its label (the label is what API users see)."""

CATEGORIES: dict[str, tuple[str, ...]] = {
    "clothing": ("white studio sweep", "light grey studio sweep", "linen flat lay",
                 "concrete surface", "pastel studio sweep", "loft interior", "city lights bokeh"),
    "jewelry": ("velvet display", "marble countertop", "soft light backdrop",
                "black gloss surface", "linen flat lay", "pastel studio sweep"),
    "furniture": ("living room", "loft interior", "white studio sweep",
                  "light grey studio sweep", "concrete surface"),
    "beauty": ("soft light backdrop", "marble countertop", "pastel studio sweep",
               "black gloss surface", "colour gradient", "shelf with window light"),
    "houseware": ("kitchen counter", "wooden table", "shelf with window light",
                  "marble countertop", "white studio sweep", "linen flat lay"),
    "electronics": ("dark studio sweep", "black gloss surface", "white studio sweep",
                    "city lights bokeh", "concrete surface", "colour gradient"),
    "food": ("wooden table", "kitchen counter", "linen flat lay", "kraft paper flat lay",
             "marble countertop", "garden bokeh"),
    "accessories": ("marble countertop", "white studio sweep", "concrete surface",
                    "city lights bokeh", "velvet display", "pastel studio sweep"),
    "shoes": ("concrete surface", "white studio sweep", "city lights bokeh",
              "light grey studio sweep", "beach sand", "garden bokeh"),
    "bags": ("white studio sweep", "marble countertop", "concrete surface", "living room",
             "city lights bokeh", "pastel studio sweep"),
    "home": ("shelf with window light", "living room", "wooden table", "kitchen counter",
             "linen flat lay", "white studio sweep"),
    "other": ("white studio sweep", "marble countertop", "wooden table", "garden bokeh",
              "sunset sky", "dark studio sweep"),
}  # fmt: skip
"""Scenes that suit each product category, most suitable first."""

MAX_SCENES = len(SCENES)


def _rng(seed: int, *salt: int) -> np.random.Generator:
    # crc32 of a name is stable across processes (unlike hash()), so seeds reproduce anywhere.
    return np.random.default_rng([seed & 0xFFFFFFFF, *salt])


def choose_scenes(category: str, n: int, seed: int = 0) -> list[str]:
    """``n`` distinct scene names for a product ``category``: its suitable scenes first (the
    top one always first, the rest in a seed-dependent order), then the other scenes in a
    seed-dependent order. The result for ``n`` is a prefix of the result for any larger ``n``.
    """
    if not 1 <= n <= MAX_SCENES:
        raise ValueError(f"n must be between 1 and {MAX_SCENES}")
    cat = normalise_category(category)
    rng = _rng(seed, zlib.crc32(cat.encode()))
    hero, *liked = CATEGORIES[cat]
    others = [name for name in SCENES if name != hero and name not in liked]
    order = [hero]
    order += [liked[i] for i in rng.permutation(len(liked))]
    order += [others[i] for i in rng.permutation(len(others))]
    return order[:n]


def scene_spec(name: str) -> SceneSpec:
    """The catalogue entry for ``name`` (``ValueError`` listing the known names otherwise)."""
    try:
        return SCENES[name]
    except KeyError:
        raise ValueError(f"unknown scene {name!r}; known: {', '.join(SCENES)}") from None


def render_backdrop(name: str, seed: int, size: int) -> Backdrop:
    """The empty backdrop of scene ``name`` as :func:`render_scene` paints it (same seed, same
    pixels): useful to preview a scene or to measure what the compositing changed."""
    backdrop, _ = _backdrop_and_rng(scene_spec(name), seed, size)
    return backdrop


def _backdrop_and_rng(
    spec: SceneSpec, seed: int, size: int
) -> tuple[Backdrop, np.random.Generator]:
    rng = _rng(seed, zlib.crc32(spec.name.encode()))
    color = spec.colors[int(rng.integers(len(spec.colors)))] if spec.colors else None
    backdrop = spec.painter(size, size, rng, horizon=spec.horizon, color=color)
    return backdrop, rng


def composite(
    backdrop: Backdrop,
    layer: Layer,
    *,
    shadow: ShadowKind = "floor",
    shadow_strength: float = 1.0,
    reflection: float = 0.0,
    harmonise_amount: float = 0.12,
) -> Rgb:
    """Backdrop + shadow + reflection + (harmonised) subject, as a new float32 image."""
    canvas = backdrop.rgb.copy()
    if shadow == "floor":
        add_floor_shadow(canvas, layer, shadow_strength)
    elif shadow == "drop":
        add_drop_shadow(canvas, layer, shadow_strength)
    subject = harmonise(layer, backdrop.rgb, backdrop.light, harmonise_amount)
    if reflection > 0:
        add_reflection(canvas, subject, reflection)
    paste(canvas, subject)
    return canvas


def render_scene(
    cutout_rgba: ImageArray, scene_name: str, seed: int = 0, size: int = 1024
) -> ImageArray:
    """Render one scene: the cut-out (RGBA uint8, any size; transparent margins are ignored)
    placed on the scene's backdrop at the scene's scale, standing on its floor line, with a
    contact or drop shadow, an optional floor reflection and light harmonisation. Returns a
    ``size`` × ``size`` RGB uint8 image."""
    if cutout_rgba.ndim != 3 or cutout_rgba.shape[2] != 4:
        raise ValueError("render_scene needs an RGBA cut-out")
    spec = scene_spec(scene_name)
    backdrop, rng = _backdrop_and_rng(spec, seed, size)
    subject = crop_cutout(cutout_rgba)
    box = fit_box(subject.shape[:2], (size, size), height=spec.height, base=spec.base)
    layer = layer_from_cutout(subject, box)
    rgb = composite(backdrop, layer, shadow=spec.shadow, reflection=spec.reflection)
    return to_uint8(rgb, rng)
