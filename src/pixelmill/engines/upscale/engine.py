"""The ``upscale`` engine: ×2, ×4 or ×8 at three quality levels, alpha preserved.

Each quality level maps to an :class:`UpscaleMethod` in :data:`METHODS`: a function that
upscales RGB by one of its native factors, plus an honest name. Larger scales are chained from
native passes (×8 = ×4 then ×2). To put a learned model behind a quality level, build an
``UpscaleMethod`` around it and assign it in :data:`METHODS`; nothing else changes. A method may
declare ``max_input_pixels``: bigger inputs then use the fast method, and ``details`` says so.

Alpha is handled here, once, for every method: colours are premultiplied by alpha before
upscaling (so the arbitrary colours of transparent pixels cannot bleed into edges) and the alpha
channel is upscaled on its own with plain bicubic interpolation: sharpening a matte would only
add halos, and Lanczos' extra lobes leave ripples of partial transparency inside opaque areas.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

import cv2
import numpy as np
from pydantic import BaseModel, Field

from pixelmill.engines.base import (
    BaseEngine,
    EngineError,
    EngineInputs,
    EngineResult,
    ImageArray,
    OutputImage,
)
from pixelmill.engines.runtime.families.presence import best_runner
from pixelmill.engines.runtime.families.upscaler import Upscaler
from pixelmill.engines.upscale import classical, learned

Quality = Literal["fast", "balanced", "high"]

MAX_OUTPUT_PIXELS = 8192 * 8192
"""Refuse outputs above 67 MP: an 8192² RGBA result is already 256 MiB before encoding."""


def _no_load() -> None:
    """Classical methods have nothing to load."""


@dataclass(frozen=True)
class UpscaleMethod:
    """One way to upscale RGB ``uint8`` images.

    ``upscale(rgb, factor)`` must return exactly ``factor`` × the input size for each factor in
    ``factors``. ``name`` is shown to API users in ``details["method"]``."""

    name: str
    upscale: Callable[[ImageArray, int], ImageArray]
    factors: tuple[int, ...] = (2, 4)
    load: Callable[[], None] = _no_load
    max_input_pixels: int | None = None


FAST = UpscaleMethod(
    name="Lanczos-4 resampling + light unsharp mask",
    upscale=classical.lanczos_unsharp,
)
BALANCED = UpscaleMethod(
    name="iterative back-projection on luma (4 steps, bicubic projection, guided-filter "
    "regularisation) + Lanczos chroma",
    upscale=lambda rgb, f: classical.back_projection(rgb, f, classical.BALANCED),
)
HIGH = UpscaleMethod(
    name="iterative back-projection on luma (8 steps, Lanczos projection, guided-filter "
    "regularisation) + Lanczos chroma",
    upscale=lambda rgb, f: classical.back_projection(rgb, f, classical.HIGH),
)

LEARNED = UpscaleMethod(
    name="pixelmill-sr balanced (our compact learned residual CNN on luma, trained on mixed "
    "real-world degradations; one network for ×2 and one for ×4; ×8 = ×4 then ×2) + bicubic "
    "chroma",
    upscale=lambda rgb, f: learned.upscale_learned(rgb, 4 if f == 4 else 2, "balanced"),
    factors=(2, 4),
    load=learned.load,
)
"""Our own compact networks (``learned.py``; sizes and figures in ``models/MODEL_CARD.md``),
trained on mixed degradations (bicubic with and without antialiasing, area, bilinear, nearest,
blur, noise, JPEG) so that no kind of downscaled upload comes out worse than bicubic."""

LEARNED_HIGH = UpscaleMethod(
    name="pixelmill-sr high (our larger learned residual CNNs on luma for ×2 and ×4, same "
    "training mix, each averaged with its prediction for the mirrored image; ×8 = ×4 then ×2) "
    "+ bicubic chroma",
    upscale=lambda rgb, f: learned.upscale_learned(rgb, 4 if f == 4 else 2, "high"),
    factors=(2, 4),
    load=learned.load,
)
"""The larger networks (×2: 6.5× the multiply-adds of ``balanced``, ×4: 4.7×) each run twice
(the image and its mirror image, averaged); ``models/MODEL_CARD.md``."""

METHODS: dict[Quality, UpscaleMethod] = {"fast": FAST, "balanced": LEARNED, "high": LEARNED_HIGH}
"""Quality level -> method. The single place to change what a quality level runs."""


def plan_passes(scale: int, factors: tuple[int, ...]) -> list[int]:
    """Split ``scale`` into native passes, largest first (8 with (2, 4) -> [4, 2]; 8 with (2,)
    -> [2, 2, 2]). Raises ``ValueError`` if the factors cannot make ``scale`` exactly."""
    passes: list[int] = []
    remaining = scale
    for f in sorted(factors, reverse=True):
        while f > 1 and remaining % f == 0:
            passes.append(f)
            remaining //= f
    if remaining != 1:
        raise ValueError(f"cannot build ×{scale} from native factors {factors}")
    return passes


def _upscale_alpha(alpha: ImageArray, factor: int) -> ImageArray:
    return classical.resize_exact(alpha, factor, cv2.INTER_CUBIC)


def upscale_image(image: ImageArray, scale: int, method: UpscaleMethod) -> ImageArray:
    """Upscale an RGB or RGBA image by ``scale`` with ``method``'s passes; alpha (if any) is
    kept and upscaled separately. The result is exactly ``scale`` × the input size."""
    passes = plan_passes(scale, method.factors)
    rgb = np.ascontiguousarray(image[..., :3])
    if image.shape[2] == 3:
        for f in passes:
            rgb = method.upscale(rgb, f)
        return rgb

    alpha = np.ascontiguousarray(image[..., 3])
    opaque = bool(alpha.min() == 255)
    if not opaque:
        a3 = cv2.merge([alpha, alpha, alpha])
        rgb = np.asarray(cv2.multiply(rgb, a3, scale=1.0 / 255.0), dtype=np.uint8)
    for f in passes:
        rgb = method.upscale(rgb, f)
        alpha = alpha if opaque else _upscale_alpha(alpha, f)
    h, w = rgb.shape[:2]
    if opaque:
        alpha = np.full((h, w), 255, np.uint8)
    else:
        # Un-premultiply (saturating; cv2.divide gives 0 where alpha is 0).
        a3 = cv2.merge([alpha, alpha, alpha])
        rgb = np.asarray(cv2.divide(rgb, a3, scale=255.0), dtype=np.uint8)
    return np.ascontiguousarray(np.dstack([rgb, alpha]), dtype=np.uint8)


def enhance_faces(
    upscaled: ImageArray, faces: list[tuple[int, int, int, int]], scale: int
) -> ImageArray:
    """Mild detail enhancement inside each face box (input coordinates, scaled here): an
    edge-aware detail boost (``cv2.detailEnhance``) blended at 35 % through a feathered
    ellipse, so skin texture, eyes and lips gain local contrast without a visible boundary."""
    out = upscaled.copy()
    h, w = out.shape[:2]
    for x, y, bw, bh in faces:
        # Grow the box by 20 % so hairline and chin are included, then clip.
        cx, cy = (x + bw / 2) * scale, (y + bh / 2) * scale
        rx, ry = 0.6 * bw * scale, 0.7 * bh * scale
        x0, x1 = max(0, int(cx - rx)), min(w, int(cx + rx) + 1)
        y0, y1 = max(0, int(cy - ry)), min(h, int(cy + ry) + 1)
        if x1 - x0 < 8 or y1 - y0 < 8:
            continue
        crop = np.ascontiguousarray(out[y0:y1, x0:x1, :3])
        boosted = cv2.cvtColor(
            cv2.detailEnhance(cv2.cvtColor(crop, cv2.COLOR_RGB2BGR), sigma_s=10, sigma_r=0.15),
            cv2.COLOR_BGR2RGB,
        )
        mask = np.zeros(crop.shape[:2], np.float32)
        center = (round(cx - x0), round(cy - y0))
        cv2.ellipse(mask, center, (round(rx * 0.85), round(ry * 0.85)), 0, 0, 360, 1.0, -1)
        mask = cv2.GaussianBlur(mask, (0, 0), max(2.0, 0.08 * min(rx, ry)))[..., None] * 0.35
        blended = crop.astype(np.float32) * (1 - mask) + boosted.astype(np.float32) * mask
        out[y0:y1, x0:x1, :3] = np.clip(blended + 0.5, 0, 255).astype(np.uint8)
    return out


class UpscaleParams(BaseModel):
    """Options for ``upscale``."""

    scale: Literal[2, 4, 8] = Field(2, description="upscaling factor: 2, 4 or 8")
    quality: Quality = Field(
        "balanced",
        description="fast: Lanczos + unsharp mask; balanced/high: slower, sharper methods",
    )
    face_enhance: bool = Field(
        False, description="apply a mild detail enhancement to detected faces after upscaling"
    )


def model_method(upscaler: Upscaler) -> UpscaleMethod:
    """An upscaler from ``PIXELMILL_MODELS_DIR`` (:mod:`pixelmill.models`) as a method."""
    return UpscaleMethod(
        name=f"{upscaler.name} (Real-ESRGAN, ONNX, from PIXELMILL_MODELS_DIR; "
        f"×{upscaler.scale} per pass, in {upscaler.window}-pixel tiles with 16 pixels of context)",
        upscale=lambda rgb, f: upscaler.upscale(rgb),
        factors=(upscaler.scale,),
    )


class UpscaleEngine(BaseEngine[UpscaleParams]):
    """Upscale an image ×2, ×4 or ×8; RGBA stays RGBA. With a catalogued upscaler in
    ``PIXELMILL_MODELS_DIR`` the balanced and high qualities run it (``details.model``)."""

    name: ClassVar[str] = "upscale"
    Params: ClassVar[type[BaseModel]] = UpscaleParams

    def __init__(self, models_dir: Path | None = None) -> None:
        super().__init__()
        self.models_dir = models_dir
        self.upscaler: Upscaler | None = None

    def _load(self) -> None:
        """Load whatever the configured methods need (the classical ones need nothing) and the
        best upscaler present in the models folder, if any."""
        for method in METHODS.values():
            method.load()
        runner = best_runner("upscale", self.models_dir)
        if isinstance(runner, Upscaler):
            self.upscaler = runner

    def _run(self, inputs: EngineInputs, params: UpscaleParams) -> EngineResult:
        image = inputs.image
        if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
            raise EngineError(
                f"expected an 8-bit RGB or RGBA image, got {image.dtype} {image.shape}"
            )
        h, w = image.shape[:2]
        scale = params.scale
        out_pixels = h * w * scale * scale
        if out_pixels > MAX_OUTPUT_PIXELS:
            raise EngineError(
                f"output would be {w * scale}×{h * scale} ({out_pixels / 1e6:.0f} MP); "
                f"the limit is {MAX_OUTPUT_PIXELS / 1e6:.0f} MP: use a smaller scale or image"
            )

        method = METHODS[params.quality]
        model: str | None = None
        if self.upscaler is not None and params.quality != "fast":
            candidate = model_method(self.upscaler)
            try:
                plan_passes(scale, candidate.factors)
            except ValueError:
                pass  # a ×4 model cannot make ×2: the offline method does
            else:
                method, model = candidate, self.upscaler.name
        method_name = method.name
        if method.max_input_pixels is not None and h * w > method.max_input_pixels:
            method_name = (
                f"{FAST.name} (input above {method.max_input_pixels} pixels for {method.name})"
            )
            method = FAST
        passes = plan_passes(scale, method.factors)
        out = upscale_image(image, scale, method)

        details: dict[str, Any] = {
            "scale": scale,
            "quality": params.quality,
            "passes": passes,
            "width": int(out.shape[1]),
            "height": int(out.shape[0]),
        }
        if params.face_enhance:
            # Imported lazily: mediapipe is only needed when a caller asks for this.
            from pixelmill.engines.runtime.faces import detect_faces

            faces = [f.box for f in detect_faces(image)]
            details["faces_detected"] = len(faces)
            if faces:
                out = enhance_faces(out, faces, scale)
                method_name += f"; mild edge-aware detail enhancement on {len(faces)} face(s)"
            details["face_enhance_applied"] = bool(faces)
        details["method"] = method_name
        if model is not None:
            details["model"] = model
        return EngineResult([OutputImage(out, "result")], details)
