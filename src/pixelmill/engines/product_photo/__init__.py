"""Product photos with a person: the product cut-out held, worn or placed beside an avatar on
painted scenes (``product_photo``), and the person-staging pieces the try-on capability uses
(finding and cutting out the person, reading the prompt, choosing scenes, framing and
compositing on a scene).
"""

from pixelmill.engines.product_photo.engine import (
    ProductPhotoEngine,
    ProductPhotoParams,
    feet_in_picture,
)
from pixelmill.engines.product_photo.person import (
    NO_PERSON,
    Avatar,
    Body,
    complete_body,
    cut_out,
    find_avatar,
    torso_polygon,
)
from pixelmill.engines.product_photo.placement import crop, shrink
from pixelmill.engines.product_photo.prompt import Framing, PromptReading, read_prompt
from pixelmill.engines.product_photo.staging import (
    PEOPLE_SCENES,
    STANDING_SCENES,
    STUDIO_SCENES,
    Figure,
    choose_people_scenes,
    output_data,
    stage,
)
from pixelmill.engines.runtime.person import load as load_person_models

__all__ = [
    "NO_PERSON",
    "PEOPLE_SCENES",
    "STANDING_SCENES",
    "STUDIO_SCENES",
    "Avatar",
    "Body",
    "Figure",
    "Framing",
    "ProductPhotoEngine",
    "ProductPhotoParams",
    "PromptReading",
    "choose_people_scenes",
    "complete_body",
    "crop",
    "cut_out",
    "feet_in_picture",
    "find_avatar",
    "load_person_models",
    "output_data",
    "read_prompt",
    "shrink",
    "stage",
    "torso_polygon",
]
