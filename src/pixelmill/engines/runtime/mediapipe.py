"""MediaPipe solution graphs shared by every capability that looks for people: one graph per
model per process, built on first use, each called under its own lock (a graph object is not
safe to call from several threads at once).

Only graphs whose models ship inside the ``mediapipe`` 0.10.21 wheel: pose at
``model_complexity=1`` (0 and 2 would download) and selfie segmentation."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.lazy import Lazy

NATIVE_NOISE = (
    b"All log messages before absl::InitializeLog() is called",
    b"inference_feedback_manager.cc",
    b"Created TensorFlow Lite XNNPACK delegate",
)
"""What MediaPipe's native code writes to stderr when a graph is built and first run (absl,
TensorFlow Lite); no setting turns it off, so those lines are filtered out of stderr then."""

_quiet_lock = threading.Lock()


@contextlib.contextmanager
def _without_native_noise() -> Iterator[None]:
    """For the block, file descriptor 2 goes through a pipe whose lines are copied back to the
    real stderr except :data:`NATIVE_NOISE` (another thread's log lines pass, in order)."""
    with _quiet_lock:
        try:
            sys.stderr.flush()
            saved = os.dup(2)
            read_end, write_end = os.pipe()
        except OSError:  # no stderr to filter
            yield
            return

        def copy() -> None:
            with os.fdopen(read_end, "rb") as pipe:
                for line in pipe:
                    if not any(noise in line for noise in NATIVE_NOISE):
                        os.write(saved, line)

        reader = threading.Thread(target=copy, name="stderr-filter", daemon=True)
        reader.start()
        os.dup2(write_end, 2)
        os.close(write_end)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)  # closes the pipe's last writer: the reader drains and ends
            reader.join(timeout=5)
            os.close(saved)


class Graph:
    """A MediaPipe solution graph, built on first use, called under its own lock."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._graph: Lazy[Any] = Lazy(build)
        self._lock = threading.Lock()
        self._ran = False

    def load(self) -> None:
        with _without_native_noise() if not self._ran else contextlib.nullcontext():
            self._graph.load()

    def process(self, rgb: ImageArray) -> Any:
        if not self._ran:
            with self._lock, _without_native_noise():
                result = self._graph.get().process(rgb)
                self._ran = True
                return result
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
