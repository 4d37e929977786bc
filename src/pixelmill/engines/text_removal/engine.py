"""The ``text_removal`` engine: remove captions, watermarks and logos. Two methods.

``method="ocr"``: find text with OCR, mask its strokes, inpaint them away. Detection
is PP-OCRv4 (RapidOCR). By default a detected region is removed only if the recogniser can read
it: the detector alone also fires on fur, foliage and fabric, and inpainting those would damage
the photo. ``include_unreadable`` drops that check for stylised lettering. The masked pixels
are filled by OpenCV's Telea fast-marching method (radius 5), which pixelmill-inpaint, our own
gated-convolution network (``inpaint.py``), then corrects inside the mask (``fill="gated"``, the
default for both methods; ``fill="telea"``: Telea alone): on the held-out pairs it raised
captions by 0.2-0.5 dB under the OCR method and 0.4-0.8 dB under the learned one, for about
0.1-0.2 s per megapixel.

``method="learned"`` (the default): pixelmill-overlay, our own compact network (``learned.py``,
``models/MODEL_CARD.md``), predicts where the overlay is (its coverage); the overlay's opacity
and colour are fitted from the image (``unmix.py``), semi-transparent pixels are *unmixed* (the
blend is inverted), opaque ones filled. With ``ocr_guide`` the OCR stroke mask is added to the
pixels to fill. Then (``ocr_pass``, default) PP-OCRv4 reads the result: with
``scope="overlays"`` (default) the lines the network also covers as an opaque overlay are filled
by their stroke masks (the gates ``OCR_PASS_*``); text the network does not cover is kept as the
photo's own. With ``scope="all"`` every line it reads is filled whole (its stroke mask in the
box grown by :data:`LINE_GROW`, dilated :data:`LINE_DILATE` px, with the covered pixels there;
what it still reads afterwards, box and all). The network covers most signs and printed brands
too, so on the outside corpus most of the photos' own text is not kept even with
``scope="overlays"``: figures in ``models/MODEL_CARD.md``, "Issue 62" (``docs/corpora-text.md``,
``bench/bench_text_removal.py``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import cv2
import numpy as np
from pydantic import BaseModel, Field

from pixelmill.engines.base import BaseEngine, EngineError, EngineInputs, EngineResult, OutputImage
from pixelmill.engines.runtime.ocr import Quad, detect_text_boxes, load_ocr, read_text
from pixelmill.engines.text_removal import learned
from pixelmill.engines.text_removal.inpaint import INPAINTER
from pixelmill.engines.text_removal.mask import box_mask, polygon, stroke_mask

INPAINT_RADIUS = 5
OCR_PASS_CONFIDENCE = 0.95
"""The learned method's OCR pass fills only lines the recogniser reads with at least this
confidence: the crisp opaque captions and logos the fit's gates kept read at 0.98-1.0 on the
held-out pairs; faint semi-transparent logos and watermarks over texture, which filling made
worse than the input, at 0.75-0.89."""
OCR_PASS_COVERAGE = 0.25
"""... and only where the overlay network's coverage averages at least this over the line's
strokes: the network also saw an overlay there (text that belongs to the photo, a shop sign,
scores about 0.1)."""
OCR_PASS_OPACITY = 0.2
"""... and where the network's opacity head averages at least this over them: it sees the
opaque captions and logos whose fit its gates rejected (0.2-0.4 over the loose OCR stroke mask on
the held-out pairs), and little on semi-transparent watermarks and faint logos, which filling
would make worse than the input (0.15-0.18)."""
OCR_PASS_SURE = 0.85
"""... and not where the network's coverage averages this or more over them: the network saw
that overlay plainly and the learned step has decided it (filled, unmixed, or kept because its
fill or unmixing would be worse than the input); the pass is for text the network missed. On
held-out draws 7-16 and scikit-image draws 7-9 the pass filled 65 pairs' lines at coverage
0.25-0.75, and one at 0.94: a "TM" knocked out of a semi-transparent grey box over foliage that
the learned step had kept, whose fill took most of the box (-0.25 dB against the input)."""
LINE_GROW = 0.2
"""``scope="all"``: a line's box is grown by this share of its height on every side before its
strokes are masked: italic overhangs, parentheses and descenders reach past the OCR's box."""
LINE_DILATE = 3
"""``scope="all"``: pixels a line's stroke mask is grown by (its anti-aliased edge, outline
and shadow; not tuned)."""


def _clipped_rect(region: Quad, w: int, h: int) -> list[int]:
    """``[x, y, w, h]`` of a region, clipped to the image (for ``details``)."""
    x, y, bw, bh = cv2.boundingRect(polygon(region))
    x0, y0 = max(0, x), max(0, y)
    x1, y1 = min(w, x + bw), min(h, y + bh)
    return [x0, y0, max(0, x1 - x0), max(0, y1 - y0)]


def _grown_box(region: Quad, share: float, w: int, h: int) -> Quad:
    """The axis-aligned box around ``region`` grown by ``share`` of its height on every side,
    clipped to the image."""
    pts = np.asarray(region, np.float64)
    x0, y0 = pts.min(axis=0)
    x1, y1 = pts.max(axis=0)
    g = share * (y1 - y0)
    x0, y0 = max(0.0, x0 - g), max(0.0, y0 - g)
    x1, y1 = min(w - 1.0, x1 + g), min(h - 1.0, y1 + g)
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def _inside(region: Quad, w: int, h: int) -> np.ndarray:
    """``region`` filled, as a boolean ``(h, w)`` mask."""
    m = np.zeros((h, w), np.uint8)
    cv2.fillPoly(m, [polygon(region)], 1)
    return m > 0


def _gated(radius: int) -> str:
    info = INPAINTER.info
    return (
        f"OpenCV Telea inpainting (radius {radius}) corrected inside the mask by "
        f"pixelmill-inpaint, our gated-convolution network ({info['params']:,} parameters, "
        "onnxruntime)"
    )


class TextRemovalParams(BaseModel):
    """Options for ``text_removal``; all optional."""

    method: Literal["ocr", "learned"] = Field(
        "learned",
        description=(
            "learned (default): our overlay network (pixelmill-overlay) finds overlays anywhere "
            "in the image; semi-transparent ones (watermarks) are unmixed with a fitted colour "
            "and opacity, opaque text and logos filled; where its fits cannot explain what it "
            "found, the image is left as it is. ocr: text the OCR reads is masked stroke by "
            "stroke and inpainted"
        ),
    )
    fill: Literal["gated", "telea", "learned"] = Field(
        "gated",
        description="how the pixels under opaque text and logos are filled: gated (default): "
        "OpenCV Telea inpainting corrected by our gated-convolution inpainting network "
        "(pixelmill-inpaint; closer to the photo on every kind of overlay we measured, ~0.1-0.2 "
        "s per MP more); telea: Telea alone; learned (learned method only): the overlay "
        "network's own fill head",
    )
    ocr_guide: bool = Field(
        False,
        description="learned method only: also fill the stroke mask of text the OCR finds",
    )
    ocr_pass: bool = Field(
        True,
        description="learned method only: afterwards, fill the text the OCR still reads in the "
        "result where the overlay network also found an overlay of one flat colour (opaque "
        "captions and logos whose fit the network's gates rejected); with scope=all every line "
        "it reads",
    )
    scope: Literal["overlays", "all"] = Field(
        "overlays",
        description="overlays (default): remove text laid over the photo (captions, watermarks, "
        "logos) and keep text the overlay network does not see as an overlay (the photo's own: "
        "printed on a product, a sign in the scene; the network covers many of those too); all: "
        "also remove every line the OCR reads, whole (learned method with its OCR pass; the OCR "
        "method always removes every line it reads)",
    )
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

    def __init__(self) -> None:
        super().__init__()
        self.network = learned.OverlayNetwork()

    def _load(self) -> None:
        """Load the overlay network and the OCR models (once per engine)."""
        self.network.load()
        INPAINTER.load()
        load_ocr()

    def _run(self, inputs: EngineInputs, params: TextRemovalParams) -> EngineResult:
        image = inputs.image
        if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
            raise EngineError(
                f"expected an 8-bit RGB or RGBA image, got {image.dtype} {image.shape}"
            )
        if params.method == "learned":
            return self._run_learned(image, params)
        return self._run_ocr(image, params)

    def _ocr_boxes(
        self, image: np.ndarray, params: TextRemovalParams
    ) -> tuple[list[Quad], list[str], str]:
        if params.include_unreadable:
            return detect_text_boxes(image), [], "PP-OCRv4 text detection"
        lines = read_text(image)
        return (
            [line.box for line in lines],
            [line.text for line in lines],
            "PP-OCRv4 text detection, kept where the recogniser reads text",
        )

    def _run_learned(self, image: np.ndarray, params: TextRemovalParams) -> EngineResult:
        rgb = np.ascontiguousarray(image[..., :3])
        h, w = rgb.shape[:2]
        details: dict[str, Any] = {}
        extra = None
        guide = ""
        if params.ocr_guide:
            boxes, texts, detection = self._ocr_boxes(image, params)
            details.update(
                text_regions=len(boxes), texts=texts, boxes=[_clipped_rect(b, w, h) for b in boxes]
            )
            if boxes:
                extra = stroke_mask(image, boxes) > 0
            guide = f" + {detection}: stroke masks of the text found also filled"
        removal = self.network.remove(rgb, params.fill, extra)
        result = removal.image
        ocr_pass = ""
        if params.ocr_pass and not params.ocr_guide and params.scope == "all":
            result, found = self._lines(result, removal, params)
            details.update(found)
            ocr_pass = (
                "; then (scope=all) PP-OCRv4 on that result: every line it reads is filled "
                f"whole (stroke mask in its box grown by {LINE_GROW:g} of its height, dilated "
                f"{LINE_DILATE} px, with the covered pixels there; what it still reads "
                "afterwards, box and all)"
            )
        elif params.ocr_pass and not params.ocr_guide:
            result, lines = self._ocr_pass(
                result, removal.coverage, removal.head_opacity, params.fill
            )
            details["ocr_pass_lines"] = lines
            ocr_pass = (
                f"; then PP-OCRv4 on the result: lines it still reads (confidence >= "
                f"{OCR_PASS_CONFIDENCE:g}) whose strokes the network covers (mean coverage >= "
                f"{OCR_PASS_COVERAGE:g}) and calls opaque (mean opacity >= {OCR_PASS_OPACITY:g}) "
                "filled by their stroke masks"
            )
        info = self.network.info()
        st = learned.SETTINGS
        filling = (
            "the network's fill head"
            if params.fill == "learned"
            else _gated(st.telea_radius)
            if params.fill == "gated"
            else f"OpenCV Telea inpainting (radius {st.telea_radius})"
        )
        details.update(
            method=(
                f"pixelmill-overlay network ({info['params']:,} parameters, onnxruntime) predicts "
                f"where the overlay is (coverage k; hysteresis {st.low:g}/{st.high:g}); its "
                "opacity a and colour c are fitted by robust least squares (observed - photo = "
                "k a (c - photo)), for the whole image and again per overlay region; "
                "semi-transparent pixels unmixed (clean = (observed - a k c) / (1 - a k)), "
                f"opaque pixels (a k >= {st.fill_at:g}) filled by {filling}; regions no fit "
                f"explains (< {st.min_explained:g} of their variation) kept as they are{guide}"
                f"{ocr_pass}"
            ),
            mask_coverage=round(removal.unmixed_fraction + removal.filled_fraction, 4),
            unmixed_coverage=round(removal.unmixed_fraction, 4),
            filled_coverage=round(removal.filled_fraction, 4),
            overlay_fit=removal.fit,
            model=info,
        )
        if params.fill == "gated":
            details["inpaint_model"] = INPAINTER.info
        out = result if image.shape[2] == 3 else np.dstack([result, image[..., 3]])
        return EngineResult([OutputImage(np.ascontiguousarray(out), "result")], details)

    def _ocr_pass(
        self, rgb: np.ndarray, coverage: np.ndarray, opacity: np.ndarray, fill: str
    ) -> tuple[np.ndarray, list[str]]:
        """Fill the lines the OCR reads in ``rgb`` (the learned method's result) that pass the
        gates (:data:`OCR_PASS_CONFIDENCE`; :data:`OCR_PASS_COVERAGE`, :data:`OCR_PASS_SURE`,
        :data:`OCR_PASS_OPACITY` on the network's ``coverage`` and ``opacity`` head); returns
        the image and the texts of the lines filled."""
        mask = np.zeros(rgb.shape[:2], bool)
        filled: list[str] = []
        for line in read_text(rgb):
            if line.confidence < OCR_PASS_CONFIDENCE:
                continue
            strokes = stroke_mask(rgb, [line.box]) > 0
            if not strokes.any():
                continue
            covered = float(coverage[strokes].mean())
            if covered < OCR_PASS_COVERAGE or covered >= OCR_PASS_SURE:
                continue
            if float(opacity[strokes].mean()) < OCR_PASS_OPACITY:
                continue
            mask |= strokes
            filled.append(line.text)
        if not filled:
            return rgb, filled
        if fill == "telea":
            out = np.asarray(
                cv2.inpaint(rgb, mask.astype(np.uint8), INPAINT_RADIUS, cv2.INPAINT_TELEA),
                np.uint8,
            )
        else:
            out = INPAINTER.fill(rgb, mask, INPAINT_RADIUS)
        return np.ascontiguousarray(out), filled

    def _lines(
        self, rgb: np.ndarray, removal: learned.Removal, params: TextRemovalParams
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """``scope="all"``: every line PP-OCRv4 reads in the learned step's result ``rgb`` is
        filled whole (its stroke mask in its grown box, dilated, with the pixels the network
        covers there); what the OCR still reads of those boxes afterwards is filled box and all.
        Returns the image and the lines removed, for ``details``."""
        h, w = rgb.shape[:2]
        mask = np.zeros((h, w), bool)
        boxes = np.zeros((h, w), bool)
        removed: list[str] = []
        for line in read_text(rgb):
            box = _grown_box(line.box, LINE_GROW, w, h)
            near = _inside(box, w, h)
            mask |= (stroke_mask(rgb, [box], dilate=LINE_DILATE) > 0) | (
                near & (removal.coverage >= 0.2)
            )
            boxes |= near
            removed.append(line.text)
        result = rgb
        if mask.any():
            result = self._fill(rgb, mask, params.fill)
            left = np.zeros((h, w), bool)
            for line in read_text(result):
                inside = _inside(line.box, w, h)
                if (inside & boxes).sum() >= 0.5 * inside.sum():
                    left |= inside & boxes
            if left.any():
                result = self._fill(result, left, params.fill)
        return np.ascontiguousarray(result), {"lines_removed": removed}

    @staticmethod
    def _fill(rgb: np.ndarray, mask: np.ndarray, fill: str) -> np.ndarray:
        if fill == "telea":
            return np.asarray(
                cv2.inpaint(rgb, mask.astype(np.uint8), INPAINT_RADIUS, cv2.INPAINT_TELEA),
                np.uint8,
            )
        return INPAINTER.fill(np.ascontiguousarray(rgb), mask, INPAINT_RADIUS)

    def _run_ocr(self, image: np.ndarray, params: TextRemovalParams) -> EngineResult:
        boxes, texts, detection = self._ocr_boxes(image, params)

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
        if params.fill == "gated":
            restored = INPAINTER.fill(rgb, mask > 0, INPAINT_RADIUS)
            filling = _gated(INPAINT_RADIUS)
            details["inpaint_model"] = INPAINTER.info
        else:
            restored = np.asarray(
                cv2.inpaint(rgb, mask, INPAINT_RADIUS, cv2.INPAINT_TELEA), np.uint8
            )
            filling = f"OpenCV Telea inpainting (radius {INPAINT_RADIUS})"
        out = np.ascontiguousarray(
            restored if image.shape[2] == 3 else np.dstack([restored, image[..., 3]])
        )
        details.update(
            method=f"{detection} + {masking} + {filling}",
            mask_coverage=round(float((mask > 0).mean()), 4),
        )
        return EngineResult([OutputImage(out.astype(np.uint8), "result")], details)
