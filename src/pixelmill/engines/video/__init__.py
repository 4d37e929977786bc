"""Short videos from one still image and a voice track (see ``render``)."""

from pixelmill.engines.video.backend import VideoBackend
from pixelmill.engines.video.canvas import ASPECTS
from pixelmill.engines.video.encode import EncodeError, probe
from pixelmill.engines.video.render import FPS, Video, envelope, render

__all__ = [
    "ASPECTS",
    "FPS",
    "EncodeError",
    "Video",
    "VideoBackend",
    "envelope",
    "probe",
    "render",
]
