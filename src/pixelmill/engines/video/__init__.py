"""Short videos from one still image and a voice track (see ``render``)."""

from pixelmill.engines.video.canvas import ASPECTS
from pixelmill.engines.video.encode import EncodeError, probe
from pixelmill.engines.video.hosted import HostedVideo
from pixelmill.engines.video.render import FPS, Video, envelope, render

__all__ = [
    "ASPECTS",
    "FPS",
    "EncodeError",
    "HostedVideo",
    "Video",
    "VideoBackend",
    "envelope",
    "probe",
    "render",
]

VideoBackend = HostedVideo
"""The video job's renderer at a provider (``PIXELMILL_ROUTE_VIDEO``); offline: its fallback."""
