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
from pixelmill.engines.scenes.engine import ScenesEngine, ScenesParams, prepare_cutout

__all__ = [
    "CATEGORIES",
    "MAX_SCENES",
    "SCENES",
    "Backdrop",
    "Painter",
    "SceneSpec",
    "ScenesEngine",
    "ScenesParams",
    "choose_scenes",
    "linear_gradient",
    "normalise_category",
    "prepare_cutout",
    "render_backdrop",
    "render_scene",
    "solid_color",
    "studio_sweep",
]
