"""``tryon`` routed to a diffusion try-on model (``PIXELMILL_ROUTE_TRYON``, Replicate or
ComfyUI): one provider run per output (seed + position), the person image and the garment as
inputs (Replicate ``human_img``, ``garm_img``, ``garment_des``, ``seed``; ComfyUI ``{{image}}``,
``{{garment}}``, ``{{prompt}}``, ``{{seed}}``). Also a multi-image engine: the job runner renders
one output at a time and, when a render fails with ``fallback=offline``, renders the offline
engine's output at that position instead."""

from __future__ import annotations

from functools import partial

from pydantic import BaseModel

from pixelmill.engines.base import (
    EngineError,
    EngineInputs,
    EngineResult,
    ImageArray,
    OutputImage,
    PlannedImage,
)
from pixelmill.engines.runtime.hosted import HostedEngine
from pixelmill.engines.runtime.lazy import Lazy
from pixelmill.providers.http import ProviderFailure
from pixelmill.providers.media import IMAGE_SIDE, decode_output, png_bytes


class TryOnHosted(HostedEngine):
    providers = ("replicate", "comfyui")
    workflow_inputs = frozenset()

    def _garment(self, inputs: EngineInputs) -> ImageArray:
        product = inputs.extra.get("product")
        if product is None:
            raise EngineError("a product image is needed (inputs.extra['product'])")
        return product

    def _one(self, inputs: EngineInputs, params: BaseModel, position: int) -> OutputImage:
        route, backends = self.route, self.backends
        garment = self._garment(inputs)
        description = getattr(params, "prompt", None) or str(getattr(params, "category", ""))
        seed = int(getattr(params, "seed", 0) or 0) + position
        person, cloth = png_bytes(inputs.image, IMAGE_SIDE), png_bytes(garment, IMAGE_SIDE)
        if route.provider == "replicate":
            data = self._replicate(
                {"human_img": person, "garm_img": cloth, "garment_des": description, "seed": seed}
            )
        else:
            data = self._comfyui(
                {"image": person, "garment": cloth},
                {"prompt": description, "negative_prompt": "", "seed": seed},
            )
        pixels = decode_output(data, route.provider, backends.max_pixels)
        return OutputImage(
            pixels[..., :3] if pixels.shape[2] == 4 else pixels,
            label=f"tryon {position + 1}",
            data={"provider": route.label, "seed": seed},
        )

    def _provider_run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        count = int(getattr(params, "num_outputs", 1))
        images = [self._one(inputs, params, i) for i in range(count)]
        h, w = images[0].pixels.shape[:2]
        how = "Replicate predictions" if self.route.provider == "replicate" else "ComfyUI workflows"
        return EngineResult(
            images,
            self._details(
                f"virtual try-on model {self.route.label} ({how}, one per output)",
                category=getattr(params, "category", None),
                seed=int(getattr(params, "seed", 0) or 0),
                width=w,
                height=h,
            ),
        )

    def plan(self, inputs: EngineInputs, params: BaseModel) -> list[PlannedImage]:
        self._garment(inputs)
        self.inner.validate(params)
        count = int(getattr(params, "num_outputs", 1))
        offline: Lazy[list[PlannedImage]] = Lazy(partial(self._offline_plan, inputs, params))
        return [
            PlannedImage(i, f"tryon {i + 1}", partial(self._render, inputs, params, i, offline))
            for i in range(count)
        ]

    def _offline_plan(self, inputs: EngineInputs, params: BaseModel) -> list[PlannedImage]:
        plan = getattr(self.inner, "plan", None)
        if plan is None:
            raise EngineError("the offline engine cannot plan")
        self.inner.load()
        planned: list[PlannedImage] = plan(inputs, params)
        return planned

    def _render(
        self,
        inputs: EngineInputs,
        params: BaseModel,
        position: int,
        offline: Lazy[list[PlannedImage]],
    ) -> OutputImage:
        try:
            return self._one(inputs, params, position)
        except ProviderFailure as exc:
            self.output_failed(exc, f"{self.route.label} failed")
            out = offline.get()[position].render()
            data = {**out.data, "provider": "offline", "provider_failed": str(exc)}
            return OutputImage(out.pixels, out.label, out.preferred_format, out.score, data)
