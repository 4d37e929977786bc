"""The ``text_removal`` engine: find text with OCR, mask its strokes, inpaint them away.

Detection is PP-OCRv4 (RapidOCR). By default a detected region is removed only if the
recogniser can read it: the detector alone also fires on fur, foliage and fabric, and inpainting
those would damage the photo. ``include_unreadable`` drops that check for stylised lettering.
Inpainting is OpenCV's Telea fast-marching method (radius 5): about 100–200 ms per megapixel
for typical text coverage; no learned inpainting model ships offline (``docs/models.md``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import cv2
import numpy as np
from pydantic import BaseModel, Field

from pixelmill.engines.base import BaseEngine, EngineError, EngineInputs, EngineResult, OutputImage
from pixelmill.engines.runtime.ocr import Quad, detect_text_boxes, load_ocr, read_text
from pixelmill.engines.text_removal.mask import box_mask, polygon, stroke_mask

INPAINT_RADIUS = 5


def _clipped_rect(region: Quad, w: int, h: int) -> list[int]:
    """``[x, y, w, h]`` of a region, clipped to the image (for ``details``)."""
    x, y, bw, bh = cv2.boundingRect(polygon(region))
    x0, y0 = max(0, x), max(0, y)
    x1, y1 = min(w, x + bw), min(h, y + bh)
    return [x0, y0, max(0, x1 - x0), max(0, y1 - y0)]


class TextRemovalParams(BaseModel):
    """Options for ``text_removal``; all optional."""

    mask: Literal["strokes", "boxes"] = Field(
        "strokes",
        description=(
            "strokes: inpaint only the letters' pixels (keeps more of the photo); "
            "boxes: inpaint the whole text boxes (removes everything, smears more)"
        ),
    )
    include_unreadable: bool = Field(
        False,
        description="also remove regions the detector marks as text but the recogniser cannot "
        "read (stylised lettering; may also touch textured areas)",
    )


class TextRemovalEngine(BaseEngine[TextRemovalParams]):
    """Remove text and text watermarks from an image."""

    name: ClassVar[str] = "text_removal"
    Params: ClassVar[type[BaseModel]] = TextRemovalParams

    def _load(self) -> None:
        """Load the OCR models (once per process)."""
        load_ocr()

    def _run(self, inputs: EngineInputs, params: TextRemovalParams) -> EngineResult:
        image = inputs.image
        if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
            raise EngineError(
                f"expected an 8-bit RGB or RGBA image, got {image.dtype} {image.shape}"
            )

        texts: list[str] = []
        boxes: list[Quad]
        if params.include_unreadable:
            boxes = detect_text_boxes(image)
            detection = "PP-OCRv4 text detection"
        else:
            lines = read_text(image)
            boxes = [line.box for line in lines]
            texts = [line.text for line in lines]
            detection = "PP-OCRv4 text detection, kept where the recogniser reads text"

        h, w = image.shape[:2]
        details: dict[str, Any] = {
            "text_regions": len(boxes),
            "texts": texts,
            "boxes": [_clipped_rect(b, w, h) for b in boxes],
        }
        if not boxes:
            details.update(method=f"{detection}: no text found, image unchanged", mask_coverage=0.0)
            return EngineResult([OutputImage(image, "result")], details)

        if params.mask == "boxes":
            mask = box_mask(image.shape, boxes)
            masking = "filled text boxes"
        else:
            mask = stroke_mask(image, boxes)
            masking = "stroke mask (lightness vs local median, per-box polarity, dilated 2 px)"
        rgb = np.ascontiguousarray(image[..., :3])
        restored = cv2.inpaint(rgb, mask, INPAINT_RADIUS, cv2.INPAINT_TELEA)
        out = np.ascontiguousarray(
            restored if image.shape[2] == 3 else np.dstack([restored, image[..., 3]])
        )
        details.update(
            method=f"{detection} + {masking} + OpenCV Telea inpainting (radius {INPAINT_RADIUS})",
            mask_coverage=round(float((mask > 0).mean()), 4),
        )
        return EngineResult([OutputImage(out.astype(np.uint8), "result")], details)
