"""``product_photo`` routed to a multi-image generative model (``PIXELMILL_ROUTE_PRODUCT_PHOTO``):
per output, one edit given the person (the avatar) and the product, asked for a photograph of
that person holding or showing that product.

- OpenAI images API: ``images/edits`` with two ``image[]`` parts, the person first.
- Replicate: ``input_image_1`` (the person), ``input_image_2`` (the product), ``prompt``,
  ``seed``, ``aspect_ratio: "3:4"`` (the inputs of multi-image FLUX Kontext models).
- ComfyUI: ``{{image}}`` (the person), ``{{product}}``, ``{{prompt}}``, ``{{negative_prompt}}``,
  ``{{seed}}``, ``{{width}}``, ``{{height}}``.

The answer is cropped to 3:4 at ``size`` and must show a person (``runtime.hosted.person_gate``;
else that output failed at the provider). The product is the model's rendering of it, not
the product's own pixels: the operator's model decides how faithful it is (docs/backends.md).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from pixelmill.categories import normalise_category
from pixelmill.engines.base import EngineError, EngineInputs, ImageArray, OutputImage
from pixelmill.engines.runtime.hosted import HostedMultiImage, OutputCall, fit_portrait, person_gate
from pixelmill.providers.media import IMAGE_SIDE, decode_output, png_bytes

NEGATIVE = "distorted product, wrong label, extra hands, deformed fingers, text, watermark"


class ProductPhotoHosted(HostedMultiImage):
    providers = ("openai", "replicate", "comfyui")
    workflow_inputs = frozenset({"image", "product", "prompt"})

    def _prepare(self, inputs: EngineInputs, params: BaseModel) -> ImageArray:
        product = inputs.extra.get("product")
        if product is None:
            raise EngineError("a product image is needed (inputs.extra['product'])")
        return product

    def _prompt(self, params: BaseModel) -> str:
        category = normalise_category(str(getattr(params, "category", "other")))
        thing = "the product" if category == "other" else f"the {category} product"
        wishes = str(getattr(params, "prompt", "") or "").strip()
        return (
            f"A lifestyle photograph of the person in the first image holding or showing {thing} "
            "from the second image. Keep the person's face and identity, and the product's "
            "exact shape, colours and label; natural scale and grip, realistic light and "
            "shadows, photorealistic" + (f"; {wishes}" if wishes else "")
        )

    def _facts(self, params: BaseModel) -> dict[str, Any]:
        return {"category": normalise_category(str(getattr(params, "category", "other")))}

    def _one(self, call: OutputCall) -> OutputImage:
        size = int(getattr(call.params, "size", 1024))
        prompt = self._prompt(call.params)
        person = png_bytes(call.inputs.image[..., :3], IMAGE_SIDE)
        product = png_bytes(call.prepared, IMAGE_SIDE)
        if self.route.provider == "openai":
            data = self.backends.get_openai().edit_image(
                self.route.model,
                person,
                prompt,
                extra_images=[product],
                cancel=self.backends.token(),
            )
        elif self.route.provider == "replicate":
            data = self._replicate(
                {
                    "input_image_1": person,
                    "input_image_2": product,
                    "prompt": prompt,
                    "seed": call.seed,
                    "aspect_ratio": "3:4",
                }
            )
        else:
            values = {"prompt": prompt, "negative_prompt": NEGATIVE, "seed": call.seed}
            size_values = {"width": round(size * 3 / 4), "height": size}
            data = self._comfyui({"image": person, "product": product}, values | size_values)
        decoded = decode_output(data, self.route.provider, self.backends.max_pixels)
        pixels = fit_portrait(decoded, size)
        facts = {
            "landmarks": person_gate(pixels, self.route.provider),
            "provider": self.route.label,
            "seed": call.seed,
            "prompt": prompt,
        }
        return OutputImage(pixels, label=f"product photo {call.position + 1}", data=facts)
