"""MediaPipe solution graphs shared by every capability that looks for people: one graph per
model per process, built on first use, each called under its own lock (a graph object is not
safe to call from several threads at once).

Only graphs whose models ship inside the ``mediapipe`` 0.10.21 wheel: pose at
``model_complexity=1`` (0 and 2 would download) and selfie segmentation."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.lazy import Lazy


class Graph:
    """A MediaPipe solution graph, built on first use, called under its own lock."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._graph: Lazy[Any] = Lazy(build)
        self._lock = threading.Lock()

    def load(self) -> None:
        self._graph.load()

    def process(self, rgb: ImageArray) -> Any:
        graph = self._graph.get()
        with self._lock:
            return graph.process(rgb)


def _build_pose() -> Any:
    from mediapipe.python.solutions import pose

    # model_complexity=1 is the only pose model bundled in the wheel; 0 and 2 would download.
    # enable_segmentation adds the pose graph's own person mask.
    return pose.Pose(
        static_image_mode=True,
        model_complexity=1,
        enable_segmentation=True,
        min_detection_confidence=0.5,
    )


def _build_selfie() -> Any:
    from mediapipe.python.solutions import selfie_segmentation

    # 0: the general model (256×256); 1 (landscape, 144×256) is faster but coarser.
    return selfie_segmentation.SelfieSegmentation(model_selection=0)


POSE = Graph(_build_pose)
"""The one pose graph: landmarks plus the pose graph's person mask (person finding for avatars,
product photos and try-on; person boxes in :mod:`~pixelmill.engines.runtime.faces`). The mask
does not change the landmarks (checked against the maskless graph: identical)."""
SELFIE = Graph(_build_selfie)
"""Selfie segmentation: a soft person mask (avatars, person cut-outs)."""
