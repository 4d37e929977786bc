"""Another renderer of a talking video: the seam between the video job (``marketing``) and a
provider's talking-video model (``providers.video.RoutedVideo``), so neither domain imports the
other. Given the image, the speech and the script it returns the MP4, or calls ``offline`` (the
renderer here) when it falls back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from pixelmill.engines.base import ImageArray, OutputFile
from pixelmill.engines.speech import Speech


class VideoBackend(Protocol):
    def render(
        self,
        image: ImageArray,
        speech: Speech,
        script: str,
        *,
        aspect: str,
        subtitles: bool,
        seed: int,
        offline: Callable[[], OutputFile],
    ) -> OutputFile: ...
