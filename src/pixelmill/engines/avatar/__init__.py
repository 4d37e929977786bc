"""Avatars: full-body flat illustrations drawn from a prompt (``avatar_guided``), clean studio
variants of the person in a photo (``avatar_reference``), and the public gallery of fixed guided
avatars that ``model_id`` can name.

Both engines are multi-image engines (``plan`` -> one :class:`~pixelmill.engines.base.PlannedImage`
per output) and put the avatar's body landmarks in each output's ``data["landmarks"]``
(:data:`LANDMARK_NAMES`, output pixel coordinates, MediaPipe's subject-left/right naming).
"""

from pixelmill.engines.avatar.gallery import GALLERY, GalleryModel, gallery_model
from pixelmill.engines.avatar.guided import GuidedAvatarEngine, GuidedAvatarParams
from pixelmill.engines.avatar.reference import ReferenceAvatarEngine, ReferenceAvatarParams
from pixelmill.engines.avatar.skeleton import LANDMARK_NAMES

__all__ = [
    "GALLERY",
    "LANDMARK_NAMES",
    "GalleryModel",
    "GuidedAvatarEngine",
    "GuidedAvatarParams",
    "ReferenceAvatarEngine",
    "ReferenceAvatarParams",
    "gallery_model",
]
