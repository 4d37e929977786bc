"""One-click enhancement: several classical restorations computed in parallel, ranked by a
no-reference quality score, best first.

Variants (each a short chain of :mod:`~pixelmill.engines.enhance.adjust` and
:mod:`~pixelmill.engines.runtime.colour` steps):

- **Balanced Restore**: capped gray-world white balance, levels stretch, auto-gamma, gentle
  CLAHE on ``L*``, light unsharp mask.
- **Vivid Restore**: Balanced plus stronger local contrast, vibrance and sharpening.
- **Exposure Fix**: levels stretch, shadow/highlight recovery and auto-gamma only; no colour
  change (the conservative choice for photos whose colour is already right).
- **Denoise**: Balanced without sharpening, then bilateral denoising tuned to the noise level
  measured after the tone changes.
- **Detail Sharpen**: Balanced plus a two-scale unsharp mask (fine edges and mid-scale texture).
- **Face Enhance** (only when faces are found): Balanced, then inside a feathered ellipse
  around each face: edge-preserving skin smoothing, a lift of the face's lightness towards a
  mid-tone, and fine-detail sharpening.

- **Face Restore** (only when faces are found and ``PIXELMILL_MODELS_DIR`` holds a catalogued
  face restorer, GFPGAN: :mod:`pixelmill.models`): Balanced, then each face restored by the
  network as FaceFusion does (:mod:`~pixelmill.engines.runtime.families.face_restorer`);
  ``details.model`` names it.

The ranking score is explained in :mod:`~pixelmill.engines.enhance.quality`. Offline there is no
neural restoration model: the Face Restore variant needs one pulled (``pixelmill models pull``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import ClassVar

import cv2
import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from pixelmill.engines.base import BaseEngine, EngineInputs, EngineResult, ImageArray, OutputImage
from pixelmill.engines.enhance import adjust
from pixelmill.engines.enhance.quality import QualityScore, quality_score
from pixelmill.engines.runtime import faces as face_detection
from pixelmill.engines.runtime.colour import (
    from_lab,
    merge_alpha,
    split_alpha,
    to_lab,
    unsharp_mask,
)
from pixelmill.engines.runtime.families.face_restorer import FaceRestorer, Landmarks
from pixelmill.engines.runtime.families.presence import best_runner
from pixelmill.engines.runtime.measures import LUMA_NOISE_RATIO, noise_sigma

Variant = Callable[[ImageArray], ImageArray]
Render = Callable[[], ImageArray]


def balanced_restore(toned: ImageArray) -> ImageArray:
    """From :func:`~pixelmill.engines.enhance.adjust.restore_tone` (capped gray-world white
    balance, levels stretch, auto-gamma): CLAHE at half strength and a light unsharp mask."""
    out = adjust.clahe_lightness(toned, clip_limit=1.5, blend=0.5)
    return unsharp_mask(out, sigma=1.0, amount=0.5, threshold=1.5)


def vivid_restore(toned: ImageArray) -> ImageArray:
    """From the restored tone: stronger CLAHE, vibrance (+35 % on dull colours), more
    sharpening."""
    out = adjust.clahe_lightness(toned, clip_limit=2.5, blend=0.8)
    out = adjust.vibrance(out, amount=0.35)
    return unsharp_mask(out, sigma=1.0, amount=0.8, threshold=1.5)


def exposure_fix(rgb: ImageArray) -> ImageArray:
    """From the original, tone only: levels stretch, shadow/highlight recovery, auto-gamma."""
    out = adjust.levels_stretch(rgb)
    out = adjust.local_tone_map(out, shadows=0.35, highlights=0.2)
    return adjust.auto_gamma(out)


def denoise_restore(toned: ImageArray) -> ImageArray:
    """From the restored tone: half-strength CLAHE, then denoising tuned to the noise measured
    *after* the tone changes (stretching and CLAHE amplify grain, so denoising first would
    leave it)."""
    out = adjust.clahe_lightness(toned, clip_limit=1.5, blend=0.5)
    return adjust.denoise(out, noise_sigma(out) / LUMA_NOISE_RATIO)


def detail_sharpen(toned: ImageArray) -> ImageArray:
    """Balanced plus a two-scale unsharp mask: σ = 1 for edges, σ = 4 for texture."""
    out = balanced_restore(toned)
    out = unsharp_mask(out, sigma=1.0, amount=0.7, threshold=2.0)
    return unsharp_mask(out, sigma=4.0, amount=0.35, threshold=2.0)


def _face_mask(
    shape: tuple[int, int], boxes: list[face_detection.FaceBox]
) -> npt.NDArray[np.float32]:
    """A feathered elliptical mask (0..1 float32) covering each face and a little around it."""
    h, w = shape
    mask = np.zeros((h, w), dtype=np.float32)
    for f in boxes:
        cx, cy = f.x + f.w / 2.0, f.y + f.h / 2.0
        axes = (max(2, round(f.w * 0.65)), max(2, round(f.h * 0.8)))
        cv2.ellipse(mask, (round(cx), round(cy)), axes, 0.0, 0.0, 360.0, 1.0, thickness=-1)
    feather = max(3.0, 0.1 * max((f.w for f in boxes), default=10))
    return np.asarray(cv2.GaussianBlur(mask, (0, 0), feather), dtype=np.float32)


def make_face_enhance(boxes: list[face_detection.FaceBox]) -> Variant:
    """Balanced, then face-local smoothing, tone lift and fine detail inside feathered ellipses
    (the returned variant takes the restored tone, like the others)."""

    def face_enhance(toned: ImageArray) -> ImageArray:
        base = balanced_restore(toned)
        mask = _face_mask(base.shape[:2], boxes)
        face_w = max(f.w for f in boxes)
        # Skin smoothing: an edge-preserving blur at the scale of pores (face width / 60),
        # blended at half strength so skin keeps its texture.
        smooth = cv2.bilateralFilter(base, d=0, sigmaColor=18.0, sigmaSpace=max(1.5, face_w / 60))
        soft = np.asarray(cv2.addWeighted(base, 0.5, smooth, 0.5, 0.0), dtype=np.uint8)
        lab = to_lab(soft)
        inside = mask > 0.5
        if inside.any():
            face_l = float(lab[..., 0][inside].mean()) / 100.0
            # Lift a dark face towards mid-tone (never darken a bright one).
            if face_l < 0.5:
                gamma = float(np.clip(np.log(0.5) / np.log(max(face_l, 0.05)), 0.6, 1.0))
                lab[..., 0] = np.power(lab[..., 0] / 100.0, gamma) * 100.0
        toned = from_lab(lab)
        detailed = unsharp_mask(toned, sigma=0.8, amount=0.6, threshold=1.0)
        m = mask[..., None]
        out = base.astype(np.float32) * (1.0 - m) + detailed.astype(np.float32) * m
        return np.asarray(np.clip(out + 0.5, 0, 255), dtype=np.uint8)

    return face_enhance


def landmarks(face: face_detection.FaceBox) -> Landmarks:
    """A face's eyes (image-left first), nose tip and mouth centre, as the restorer fits them."""
    eyes = sorted(face.keypoints[:2])
    points = [*eyes, face.keypoints[2], face.keypoints[3]]
    return [(float(x), float(y)) for x, y in points]


def restore_faces(restorer: FaceRestorer, faces: list[Landmarks], toned: ImageArray) -> ImageArray:
    """Balanced, then each face restored by the network."""
    return restorer.restore(balanced_restore(toned), faces)


class EnhanceParams(BaseModel):
    """Options for ``enhance``."""

    face_enhance: bool = Field(
        True, description="add the Face Enhance variant when faces are detected"
    )


class EnhanceEngine(BaseEngine[EnhanceParams]):
    """``enhance``: the best of several classical restorations, all returned, best first."""

    name: ClassVar[str] = "enhance"
    Params: ClassVar[type[BaseModel]] = EnhanceParams

    def __init__(self, max_workers: int | None = None, models_dir: Path | None = None) -> None:
        """``models_dir``: ``PIXELMILL_MODELS_DIR``; a catalogued face restorer there adds the
        Face Restore variant."""
        super().__init__()
        self._max_workers = max_workers or max(1, min(6, os.cpu_count() or 1))
        self.models_dir = models_dir
        self.restorer: FaceRestorer | None = None

    def _load(self) -> None:
        """Build the face detectors, and the best face restorer present, if any."""
        face_detection.load()
        runner = best_runner("enhance", self.models_dir)
        if isinstance(runner, FaceRestorer):
            self.restorer = runner

    def variants(self, rgb: ImageArray, face_enhance: bool = True) -> dict[str, Render]:
        """The variants that apply to ``rgb`` (Face Enhance only when faces are found), each a
        ready-to-run call. All but Exposure Fix start from one shared
        :func:`~pixelmill.engines.enhance.adjust.restore_tone` result, computed here."""
        toned = adjust.restore_tone(rgb)
        chosen: dict[str, Render] = {
            "Balanced Restore": partial(balanced_restore, toned),
            "Vivid Restore": partial(vivid_restore, toned),
            "Exposure Fix": partial(exposure_fix, rgb),
            "Denoise": partial(denoise_restore, toned),
            "Detail Sharpen": partial(detail_sharpen, toned),
        }
        if face_enhance:
            found = face_detection.detect_faces(rgb)
            if found:
                chosen["Face Enhance"] = partial(make_face_enhance(found), toned)
            marked = [landmarks(f) for f in found if len(f.keypoints) >= 4]
            if marked and self.restorer is not None:
                chosen["Face Restore"] = partial(restore_faces, self.restorer, marked, toned)
        return chosen

    def _run(self, inputs: EngineInputs, params: EnhanceParams) -> EngineResult:
        rgb, alpha = split_alpha(inputs.image)
        candidates = self.variants(rgb, params.face_enhance)

        def build(render: Render) -> tuple[ImageArray, QualityScore]:
            out = render()
            return out, quality_score(out, original=rgb)

        # OpenCV releases the GIL in its filters, so threads give real parallelism here.
        with ThreadPoolExecutor(max_workers=self._max_workers) as pool:
            futures = {label: pool.submit(build, fn) for label, fn in candidates.items()}
            original = quality_score(rgb, original=rgb)
            results = {label: fut.result() for label, fut in futures.items()}

        ranked = sorted(results.items(), key=lambda kv: -kv[1][1].total)
        images = [
            OutputImage(merge_alpha(img, alpha), label=label, score=score.total)
            for label, (img, score) in ranked
        ]
        best_label, (_, best_score) = ranked[0]
        details = {
            "method": (
                f"classical enhancement: {len(ranked)} variants ("
                + ", ".join(candidates)
                + ") computed in parallel and ranked by a no-reference quality score "
                "(exposure, contrast, range, sharpness, colourfulness minus noise, clipping and "
                "departure from the original); no neural restoration model"
            ),
            "variants": [{"label": lbl, "score": sc.total} for lbl, (_, sc) in ranked],
            "chosen": best_label,
            "score": best_score.total,
            "original_score": original.total,
            "score_terms": {"chosen": best_score.terms, "original": original.terms},
            "faces_found": "Face Enhance" in candidates,
        }
        if "Face Restore" in candidates and self.restorer is not None:
            details["model"] = self.restorer.name
            details["method"] = str(details["method"]).replace(
                "; no neural restoration model",
                f"; Face Restore: {self.restorer.name} (ONNX, from PIXELMILL_MODELS_DIR) on "
                "each face, warped to the FFHQ 512² template and blended back at 80 %",
            )
        return EngineResult(images=images, details=details)
