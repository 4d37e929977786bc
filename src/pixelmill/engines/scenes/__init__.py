"""Product scenes: procedural backdrops, compositing (shadows, reflections, harmonisation), the
scene catalogue and the ``scenes`` engine.

What other capabilities may use is exported here: replace-background and edit composite a
subject with the same cut-out, shadow, reflection and harmonisation code and paint the same
backdrops; the job runner plans and renders scenes through :class:`ScenesEngine`.
"""

from pixelmill.engines.scenes.backdrops import (
    Backdrop,
    Painter,
    linear_gradient,
    solid_color,
    studio_sweep,
)
from pixelmill.engines.scenes.catalogue import (
    CATEGORIES,
    MAX_SCENES,
    SCENES,
    SceneSpec,
    choose_scenes,
    normalise_category,
    render_backdrop,
    render_scene,
)
from pixelmill.engines.scenes.compose import (
    STRIP_PIXELS,
    Harmony,
    Layer,
    ShadowKind,
    add_drop_shadow,
    add_floor_shadow,
    add_reflection,
    alpha_box,
    crop_cutout,
    decontaminate,
    decontaminate_image,
    fit_box,
    harmony_for,
    has_meaningful_alpha,
    layer_from_cutout,
    layer_in_place,
    make_cutout,
    paste,
    row_strips,
    to_float,
    to_uint8,
    to_uint8_rounded,
)
from pixelmill.engines.scenes.engine import ScenesEngine, ScenesParams, prepare_cutout

__all__ = [
    "CATEGORIES",
    "MAX_SCENES",
    "SCENES",
    "STRIP_PIXELS",
    "Backdrop",
    "Harmony",
    "Layer",
    "Painter",
    "SceneSpec",
    "ScenesEngine",
    "ScenesParams",
    "ShadowKind",
    "add_drop_shadow",
    "add_floor_shadow",
    "add_reflection",
    "alpha_box",
    "choose_scenes",
    "crop_cutout",
    "decontaminate",
    "decontaminate_image",
    "fit_box",
    "harmony_for",
    "has_meaningful_alpha",
    "layer_from_cutout",
    "layer_in_place",
    "linear_gradient",
    "make_cutout",
    "normalise_category",
    "paste",
    "prepare_cutout",
    "render_backdrop",
    "render_scene",
    "row_strips",
    "solid_color",
    "studio_sweep",
    "to_float",
    "to_uint8",
    "to_uint8_rounded",
]
