"""``tryon`` routed to a diffusion try-on model (``PIXELMILL_ROUTE_TRYON``, Replicate or
ComfyUI): one provider run per output (seed + position), the person image and the garment as
inputs (Replicate ``human_img``, ``garm_img``, ``garment_des``, ``seed``; ComfyUI ``{{image}}``,
``{{garment}}``, ``{{prompt}}``, ``{{seed}}``). A multi-image engine
(``runtime.hosted.HostedMultiImage``): the job runner renders one output at a time and, when a
render fails with ``fallback=offline``, renders the offline engine's output at that position
instead."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from pixelmill.engines.base import EngineError, EngineInputs, ImageArray, OutputImage
from pixelmill.engines.runtime.hosted import HostedMultiImage, OutputCall
from pixelmill.providers.media import IMAGE_SIDE, decode_output, png_bytes


class TryOnHosted(HostedMultiImage):
    providers = ("replicate", "comfyui")
    workflow_inputs = frozenset()

    def _prepare(self, inputs: EngineInputs, params: BaseModel) -> ImageArray:
        product = inputs.extra.get("product")
        if product is None:
            raise EngineError("a product image is needed (inputs.extra['product'])")
        return product

    def _method(self) -> str:
        how = "Replicate predictions" if self.route.provider == "replicate" else "ComfyUI workflows"
        return f"virtual try-on model {self.route.label} ({how}, one per output)"

    def _facts(self, params: BaseModel) -> dict[str, Any]:
        return {"category": getattr(params, "category", None)}

    def _one(self, call: OutputCall) -> OutputImage:
        description = getattr(call.params, "prompt", None) or str(
            getattr(call.params, "category", "")
        )
        person, cloth = (
            png_bytes(call.inputs.image, IMAGE_SIDE),
            png_bytes(call.prepared, IMAGE_SIDE),
        )
        if self.route.provider == "replicate":
            data = self._replicate(
                {
                    "human_img": person,
                    "garm_img": cloth,
                    "garment_des": description,
                    "seed": call.seed,
                }
            )
        else:
            data = self._comfyui(
                {"image": person, "garment": cloth},
                {"prompt": description, "negative_prompt": "", "seed": call.seed},
            )
        pixels = decode_output(data, self.route.provider, self.backends.max_pixels)
        return OutputImage(
            pixels[..., :3] if pixels.shape[2] == 4 else pixels,
            label=f"tryon {call.position + 1}",
            data={"provider": self.route.label, "seed": call.seed},
        )
