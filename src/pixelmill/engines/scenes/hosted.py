"""``scenes`` routed to a generative model (``PIXELMILL_ROUTE_SCENES``: the OpenAI images API,
a Replicate inpainting model, or a ComfyUI workflow). A seller needs their real product, so the
model only paints *around* it:

1. the product is cut out once (as offline) and, per output, placed where the offline scene
   would stand it (the scene's scale and floor line), on that scene's painted backdrop: the
   image sent;
2. a mask keeps the product (where the cut-out is more than half opaque) and frees the rest;
   the prompt names the scene and the product's category;
3. the model's picture (centre-cropped to a square and scaled to ``size``) gets a contact or
   drop shadow under the product, and the cut-out's own pixels are pasted back over it, so the
   product is pixel-exact wherever it is opaque, whatever the model drew there.

Masks: OpenAI's ``mask`` is a PNG whose transparent pixels may be edited; Replicate's ``mask``
and ComfyUI's ``{{mask}}`` are grey PNGs, white where the model paints (the usual inpainting
convention). Replicate gets ``image``, ``mask``, ``prompt``, ``seed``; ComfyUI ``{{image}}``,
``{{mask}}``, ``{{prompt}}``, ``{{negative_prompt}}``, ``{{seed}}``, ``{{width}}``,
``{{height}}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel

from pixelmill.categories import normalise_category
from pixelmill.engines.base import EngineInputs, ImageArray, OutputImage
from pixelmill.engines.runtime.hosted import HostedMultiImage, OutputCall, fit_frame
from pixelmill.engines.runtime.layers import (
    Layer,
    coverage,
    crop_cutout,
    fit_box,
    layer_from_cutout,
    paste,
    prepare_cutout,
    to_float,
    to_uint8_rounded,
)
from pixelmill.engines.runtime.scenery import choose_scenes, render_backdrop, scene_spec
from pixelmill.engines.runtime.shadows import add_drop_shadow, add_floor_shadow
from pixelmill.providers.media import decode_output, png_bytes

NEGATIVE = "distorted product, extra products, text, watermark, logo, blurry, cartoon"
SHADOW_STRENGTH = 0.7
"""The pasted-back product's shadow, lighter than offline: the model lights its own scene."""


@dataclass(frozen=True)
class _CutOut:
    subject: ImageArray
    how: str


@dataclass(frozen=True)
class Request:
    """What one scene sends: the product on the scene's backdrop, the mask, the prompt, and
    the product's layer (pasted back over the answer)."""

    image: ImageArray
    keep: np.ndarray
    prompt: str
    layer: Layer


def scene_request(subject: ImageArray, scene: str, category: str, seed: int, size: int) -> Request:
    """The product placed as the offline scene places it, on that scene's backdrop."""
    spec = scene_spec(scene)
    backdrop = render_backdrop(scene, seed, size)
    box = fit_box(subject.shape[:2], (size, size), height=spec.height, base=spec.base)
    layer = layer_from_cutout(subject, box)
    canvas = backdrop.rgb.copy()
    paste(canvas, layer)
    product = "the product" if category == "other" else f"the {category.replace('_', ' ')} product"
    prompt = (
        f"Professional product photograph of {product} in a {scene} scene. Keep the "
        "product exactly as it is; photorealistic, natural light, soft realistic shadows, "
        "sharp focus, high detail."
    )
    return Request(to_uint8_rounded(canvas), coverage((size, size), layer) > 0.5, prompt, layer)


def product_back(painted: ImageArray, request: Request, shadow: str) -> ImageArray:
    """The model's picture with a shadow under the product and the product's own pixels on
    top (exact wherever the cut-out is opaque)."""
    canvas = to_float(painted)
    if shadow == "drop":
        add_drop_shadow(canvas, request.layer, SHADOW_STRENGTH)
    else:
        add_floor_shadow(canvas, request.layer, SHADOW_STRENGTH)
    paste(canvas, request.layer)
    return to_uint8_rounded(canvas)


class ScenesHosted(HostedMultiImage):
    providers = ("openai", "replicate", "comfyui")
    workflow_inputs = frozenset({"image", "mask", "prompt"})

    def _prepare(self, inputs: EngineInputs, params: BaseModel) -> _CutOut:
        cutout, how = prepare_cutout(inputs.image)
        return _CutOut(crop_cutout(cutout), how)

    def _labels(self, inputs: EngineInputs, params: BaseModel) -> list[str]:
        category = normalise_category(str(getattr(params, "category", "other")))
        count = int(getattr(params, "num_scenes", 1))
        return choose_scenes(category, count, int(getattr(params, "seed", 0)))

    def _facts(self, params: BaseModel) -> dict[str, Any]:
        return {"category": normalise_category(str(getattr(params, "category", "other")))}

    def _method(self) -> str:
        return (
            f"{super()._method()}: the scene painted around the product by inpainting, the "
            "product's own pixels pasted back over it with a contact shadow"
        )

    def _one(self, call: OutputCall) -> OutputImage:
        size = int(getattr(call.params, "size", 1024))
        scene_seed = int(getattr(call.params, "seed", 0) or 0)
        category = normalise_category(str(getattr(call.params, "category", "other")))
        request = scene_request(call.prepared.subject, call.label, category, scene_seed, size)
        data = self._paint(request, call.seed, size)
        painted = fit_frame(
            decode_output(data, self.route.provider, self.backends.max_pixels), size, size
        )
        pixels = product_back(painted, request, scene_spec(call.label).shadow)
        facts = {"provider": self.route.label, "seed": call.seed, "prompt": request.prompt}
        return OutputImage(pixels, label=call.label, data={**facts, "cutout": call.prepared.how})

    def _paint(self, request: Request, seed: int, size: int) -> bytes:
        image = png_bytes(request.image)
        keep = request.keep
        if self.route.provider == "openai":
            alpha = np.where(keep, 255, 0).astype(np.uint8)
            mask = png_bytes(np.dstack([np.zeros((*keep.shape, 3), np.uint8), alpha]))
            return self.backends.get_openai().edit_image(
                self.route.model,
                image,
                request.prompt,
                mask_png=mask,
                cancel=self.backends.token(),
            )
        paint = png_bytes(np.repeat(np.where(keep, 0, 255).astype(np.uint8)[..., None], 3, 2))
        if self.route.provider == "replicate":
            values = {"image": image, "mask": paint, "prompt": request.prompt, "seed": seed}
            return self._replicate(values)
        return self._comfyui(
            {"image": image, "mask": paint},
            {
                "prompt": request.prompt,
                "negative_prompt": NEGATIVE,
                "seed": seed,
                "width": size,
                "height": size,
            },
        )
