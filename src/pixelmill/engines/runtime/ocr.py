"""Text detection and recognition (PP-OCRv4 through RapidOCR), one instance per process.

The detector, recogniser and angle classifier ship inside the ``rapidocr-onnxruntime`` wheel, so
this works offline. The instance is built on first use under a lock (about 0.5 s) and shared by
every thread: its ONNX sessions are thread-safe, and we never pass per-call keyword overrides,
which are the only thing in ``RapidOCR.__call__`` that mutates shared state. (The detector also
re-assigns its pre-processing op on every call, but with the packaged ``limit_type: min`` that op
is identical for every image, so concurrent calls cannot see a wrong one.)

Detection alone costs about 240 ms per megapixel; full OCR about 350 (``docs/models.md``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import cv2
import numpy as np

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.lazy import Lazy

Quad = list[tuple[float, float]]
"""Four ``(x, y)`` corner points of a text box in image pixels, clockwise from top-left."""

_INTRA_OP_THREADS = 2


class TextLine(NamedTuple):
    """One recognised line of text."""

    text: str
    confidence: float
    box: Quad


def _build_ocr() -> Any:
    # Imported here: the package imports its models' code at import time and is only needed by
    # the engines that read text.
    from rapidocr_onnxruntime import RapidOCR

    return RapidOCR(intra_op_num_threads=_INTRA_OP_THREADS, inter_op_num_threads=1)


_OCR: Lazy[Any] = Lazy(_build_ocr)


def load_ocr() -> None:
    """Load the OCR models now (idempotent, thread-safe); engines call this from ``load()``."""
    _OCR.load()


def _to_bgr(image: ImageArray) -> ImageArray:
    """RapidOCR treats a 3-channel array as BGR; an RGBA image is flattened onto white first so
    transparent areas do not read as black blobs."""
    if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
        raise ValueError(f"expected a uint8 RGB or RGBA image, got {image.dtype} {image.shape}")
    rgb = image[..., :3]
    if image.shape[2] == 4:
        a = image[..., 3:4].astype(np.float32) / 255.0
        rgb = (rgb.astype(np.float32) * a + 255.0 * (1.0 - a) + 0.5).astype(np.uint8)
    return np.ascontiguousarray(cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), dtype=np.uint8)


def _quad(points: Any) -> Quad:
    return [(float(p[0]), float(p[1])) for p in points]


def detect_text_boxes(image: ImageArray) -> list[Quad]:
    """Boxes around every text line in an RGB/RGBA ``image`` (detection only, no recognition),
    top-to-bottom then left-to-right. Empty when there is no text."""
    result, _ = _OCR.get()(_to_bgr(image), use_det=True, use_cls=False, use_rec=False)
    if not result:
        return []
    return [_quad(box) for box in result]


def read_text(image: ImageArray) -> list[TextLine]:
    """Full OCR of an RGB/RGBA ``image``: each line's text, confidence (0..1) and box. Lines
    below RapidOCR's default confidence (0.5) are dropped. Empty when there is no text."""
    result, _ = _OCR.get()(_to_bgr(image), use_det=True, use_cls=True, use_rec=True)
    if not result:
        return []
    return [TextLine(str(text), float(score), _quad(box)) for box, text, score in result]
