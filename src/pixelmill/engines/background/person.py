"""Person segmentation with MediaPipe's selfie-segmentation model, which ships inside the
``mediapipe`` 0.10.21 wheel (``modules/selfie_segmentation/selfie_segmentation.tflite``,
0.24 MB; ``docs/models.md``): a soft mask of every person in the frame, hair included,
6–9 ms per image whatever its size (the model runs at 256×256).

The graph is built on first use, once per process; a graph object is not safe to call from
several threads at once, so calls hold its lock (they are short).
"""

from __future__ import annotations

import cv2
import numpy as np

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.mediapipe import SELFIE
from pixelmill.engines.runtime.segmentation import Mask

WORK_SIDE = 512
"""The model sees 256×256; a copy this large keeps the resize cheap and loses nothing."""


def load() -> None:
    """Build the graph now (idempotent, thread-safe); otherwise it is built on first use."""
    SELFIE.load()


def reduced(image: ImageArray, side: int = WORK_SIDE) -> ImageArray:
    """An RGB copy of ``image`` no larger than ``side`` on its long side (area filter)."""
    rgb = np.ascontiguousarray(image[..., :3])
    h, w = rgb.shape[:2]
    f = side / max(h, w)
    if f >= 1.0:
        return rgb
    size = (max(1, round(w * f)), max(1, round(h * f)))
    return np.asarray(cv2.resize(rgb, size, interpolation=cv2.INTER_AREA), dtype=np.uint8)


def person_mask(image: ImageArray, size: tuple[int, int] | None = None) -> Mask:
    """Soft person mask (``(H, W)`` float32, 0..1) of an RGB(A) ``image`` at its own size, or
    at ``size`` = ``(h, w)``: the model's coarse output, not edge-snapped."""
    h, w = image.shape[:2] if size is None else size
    small = reduced(image)
    result = SELFIE.process(small)
    mask = np.asarray(result.segmentation_mask, dtype=np.float32)
    resized = cv2.resize(mask, (w, h), interpolation=cv2.INTER_LINEAR)
    return np.clip(np.asarray(resized, dtype=np.float32), 0.0, 1.0)
