"""Virtual try-on (``tryon``): a garment from a product photo warped onto an avatar's body
with a thin-plate spline through its landmarks, shaded by the body, arms in front, staged on
studio backdrops. No generative model: see ``engine.py`` for the method.
"""

from pixelmill.engines.tryon.engine import (
    Dressed,
    TryOnEngine,
    TryOnParams,
    check_category,
    dress,
    prepare_garment,
)
from pixelmill.engines.tryon.garment import Garment, Sleeve, read_garment
from pixelmill.engines.tryon.warp import ThinPlateSpline, warp_rgba

__all__ = [
    "Dressed",
    "Garment",
    "Sleeve",
    "ThinPlateSpline",
    "TryOnEngine",
    "TryOnParams",
    "check_category",
    "dress",
    "prepare_garment",
    "read_garment",
    "warp_rgba",
]
