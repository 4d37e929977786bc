"""Avatars routed to a generative model: ``avatar_guided`` as text-to-image
(``PIXELMILL_ROUTE_AVATAR_GUIDED``) and ``avatar_reference`` as an identity-preserving image edit
of the person photo (``PIXELMILL_ROUTE_AVATAR_REFERENCE``), one provider run per output.

- OpenAI images API: guided ``images/generations`` at ``1024x1536``; reference
  ``images/edits`` with the photo as ``image``.
- Replicate: guided ``prompt``, ``seed``, ``aspect_ratio: "3:4"`` (the inputs of FLUX-style
  text-to-image models); reference the same plus ``input_image`` (the photo, as FLUX Kontext
  models name it).
- ComfyUI: ``{{prompt}}``, ``{{negative_prompt}}``, ``{{seed}}``, ``{{width}}``, ``{{height}}``,
  and for reference ``{{image}}`` (the photo).

Each answer is centre-cropped to 3:4 and scaled to ``height`` × ``3/4·height``, like the
offline avatars. The gate (``runtime.hosted.person_gate``): the person finder's pose must find
a person in it (its body landmarks are
the output's ``landmarks``, as offline, so the avatar can later hold or wear a product);
otherwise that output failed at the provider (offline fallback, or no charge with
``fallback=error``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel

from pixelmill.engines.avatar.person import find_person
from pixelmill.engines.base import EngineInputs, OutputImage
from pixelmill.engines.runtime.hosted import HostedMultiImage, OutputCall, fit_portrait, person_gate
from pixelmill.providers.media import IMAGE_SIDE, decode_output, png_bytes

NEGATIVE = "cropped feet, cut-off head, extra limbs, deformed hands, text, watermark, blurry"


class _HostedAvatar(HostedMultiImage):
    providers: ClassVar[tuple[str, ...]] = ("openai", "replicate", "comfyui")
    workflow_inputs: ClassVar[frozenset[str]] = frozenset({"prompt"})
    kind: ClassVar[str] = ""

    def _prompt(self, params: BaseModel) -> str:
        raise NotImplementedError

    def _paint(self, inputs: EngineInputs, prompt: str, seed: int, height: int) -> bytes:
        raise NotImplementedError

    def _method(self) -> str:
        return f"{super()._method()}: {self.kind}, checked to show a person"

    def _one(self, call: OutputCall) -> OutputImage:
        height = int(getattr(call.params, "height", 1024))
        prompt = self._prompt(call.params)
        data = self._paint(call.inputs, prompt, call.seed, height)
        decoded = decode_output(data, self.route.provider, self.backends.max_pixels)
        pixels = fit_portrait(decoded, height)
        facts: dict[str, Any] = {
            "landmarks": person_gate(pixels, self.route.provider),
            "attributes": {"prompt": prompt},
            "gender": "unspecified",
            "provider": self.route.label,
            "seed": call.seed,
        }
        return OutputImage(pixels, label=f"avatar {call.position + 1}", data=facts)

    def _comfy_values(self, prompt: str, seed: int, height: int) -> dict[str, Any]:
        width = round(height * 3 / 4)
        values = {"prompt": prompt, "negative_prompt": NEGATIVE, "seed": seed}
        return {**values, "width": width, "height": height}


class GuidedAvatarHosted(_HostedAvatar):
    kind = "text-to-image from the prompt"

    def _prompt(self, params: BaseModel) -> str:
        said = str(getattr(params, "prompt", "") or "").strip() or "a person"
        wishes = getattr(params, "characteristics", None) or {}
        extra = "".join(f", {k.replace('_', ' ')}: {v}" for k, v in sorted(wishes.items()))
        return (
            f"Full-body photograph of {said}{extra}, standing, facing the camera, the whole "
            "figure from head to feet in frame, plain light studio background, soft even light, "
            "photorealistic"
        )

    def _paint(self, inputs: EngineInputs, prompt: str, seed: int, height: int) -> bytes:
        if self.route.provider == "openai":
            return self.backends.get_openai().generate_image(
                self.route.model, prompt, size="1024x1536", cancel=self.backends.token()
            )
        if self.route.provider == "replicate":
            return self._replicate({"prompt": prompt, "seed": seed, "aspect_ratio": "3:4"})
        return self._comfyui({}, self._comfy_values(prompt, seed, height))


class ReferenceAvatarHosted(_HostedAvatar):
    kind = "an identity-preserving edit of the person photo"
    workflow_inputs = frozenset({"image", "prompt"})

    def _prompt(self, params: BaseModel) -> str:
        wishes = str(getattr(params, "additional_details", "") or "").strip()
        return (
            "A studio avatar of this same person: keep their face, identity, skin tone and hair "
            "exactly; standing, facing the camera, plain light studio background, soft even "
            "light, photorealistic" + (f"; {wishes}" if wishes else "")
        )

    def _prepare(self, inputs: EngineInputs, params: BaseModel) -> None:
        find_person(inputs.image)  # refuse a photo without a person before anything is sent

    def _paint(self, inputs: EngineInputs, prompt: str, seed: int, height: int) -> bytes:
        photo = png_bytes(inputs.image[..., :3], IMAGE_SIDE)
        if self.route.provider == "openai":
            return self.backends.get_openai().edit_image(
                self.route.model, photo, prompt, cancel=self.backends.token()
            )
        if self.route.provider == "replicate":
            values = {"input_image": photo, "prompt": prompt, "seed": seed, "aspect_ratio": "3:4"}
            return self._replicate(values)
        return self._comfyui({"image": photo}, self._comfy_values(prompt, seed, height))
