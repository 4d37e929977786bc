"""Short videos from one still image and a voice track: the registry's ``video`` engine
(:class:`TalkingVideoEngine`; ``hosted.HostedVideo`` when routed) over ``render``."""

from pixelmill.engines.video.canvas import ASPECTS
from pixelmill.engines.video.encode import EncodeError, probe
from pixelmill.engines.video.engine import TalkingVideo, TalkingVideoEngine, VideoParams
from pixelmill.engines.video.render import FPS, Video, envelope, render

__all__ = [
    "ASPECTS",
    "FPS",
    "EncodeError",
    "TalkingVideo",
    "TalkingVideoEngine",
    "Video",
    "VideoParams",
    "envelope",
    "probe",
    "render",
]
