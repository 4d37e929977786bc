"""Provider-backed engines: an operation routed to a provider is run by one of these, behind the
same :class:`~pixelmill.engines.base.Engine` protocol as the offline engine it wraps (same
``name``, same ``Params``, same ``validate``), so the pipeline, the job kinds, the prices and the
credit handling do not change.

``run`` calls the provider; when it fails (unreachable, timed out, 4xx/5xx, an answer that is not
the expected JSON or not an image) the configured fallback decides: ``offline`` runs the wrapped
offline engine and says so in ``details`` (``provider: "offline"``, ``provider_failed``),
``error`` raises :class:`~pixelmill.errors.ProviderError` (502/503; the pipeline releases the
credits). ``details.method`` and ``details.provider`` name what ran (provider and model, never a
key).
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any, ClassVar, Literal

import cv2
import numpy as np
from PIL import Image
from pydantic import BaseModel, Field, create_model

from pixelmill.engines.background import subject_matte
from pixelmill.engines.base import (
    Engine,
    EngineError,
    EngineInputs,
    EngineResult,
    ImageArray,
    OutputImage,
    PlannedImage,
)
from pixelmill.engines.prompt import aspect_ratio
from pixelmill.engines.runtime.lazy import Lazy
from pixelmill.engines.video import VideoBackend
from pixelmill.errors import ProviderError
from pixelmill.imaging import ImageInputError, ImageLimits, decode_image, encode_image
from pixelmill.jobs.cancel import CancelToken, scoped_cancel
from pixelmill.providers.comfyui import ComfyUIProvider
from pixelmill.providers.http import MAX_OUTPUT_BYTES, Cancelled, ProviderFailure
from pixelmill.providers.openai import OpenAIProvider, schema_hint
from pixelmill.providers.replicate import ReplicateProvider

log = logging.getLogger("pixelmill.providers")

Fallback = Literal["offline", "error"]


@dataclass(frozen=True)
class Route:
    """``PIXELMILL_ROUTE_<OPERATION>=<provider>:<model or workflow>``."""

    operation: str
    provider: str
    model: str

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.model}"


@dataclass
class Backends:
    """The configured provider clients (each built only when a route names it), the process's
    cancellation token (cancelled when the server stops) and the output image limit."""

    openai: Callable[[], OpenAIProvider] | None
    replicate: Callable[[], ReplicateProvider] | None
    comfyui: Callable[[], ComfyUIProvider] | None
    max_pixels: int
    cancel: CancelToken
    video: VideoBackend | None = None
    """The video job's renderer when ``PIXELMILL_ROUTE_VIDEO`` is set (``providers.video``)."""

    def __post_init__(self) -> None:
        self._openai = Lazy(self.openai) if self.openai else None
        self._replicate = Lazy(self.replicate) if self.replicate else None
        self._comfyui = Lazy(self.comfyui) if self.comfyui else None

    def get_openai(self) -> OpenAIProvider:
        if self._openai is None:
            raise ValueError("the openai provider is not configured")
        return self._openai.get()

    def get_replicate(self) -> ReplicateProvider:
        if self._replicate is None:
            raise ValueError("the replicate provider needs PIXELMILL_REPLICATE_API_TOKEN")
        return self._replicate.get()

    def get_comfyui(self) -> ComfyUIProvider:
        if self._comfyui is None:
            raise ValueError("the comfyui provider needs PIXELMILL_COMFYUI_URL")
        return self._comfyui.get()

    def token(self) -> CancelToken:
        """The cancel token of one provider call: the process's (the server stops) and the
        running job's (``cancel_scope``: the job was cancelled)."""
        return scoped_cancel(self.cancel)

    def close(self) -> None:
        """Stop in-flight provider work (remote predictions and prompts are cancelled) and
        close the clients."""
        self.cancel.cancel()
        for lazy in (self._openai, self._replicate, self._comfyui):
            if lazy is not None and lazy.loaded:
                lazy.get().close()


VISION_SIDE = 1024
"""Images sent to a vision-language model are at most this long (hosted models scale larger ones
down themselves, and pay per pixel tile)."""

IMAGE_SIDE = 2048
"""Images sent to an image model are at most this long (upload limits; models work below it)."""


def limit(pixels: ImageArray, max_side: int) -> ImageArray:
    """``pixels`` scaled down (area average) to ``max_side`` on the long side, if larger."""
    h, w = pixels.shape[:2]
    if max(h, w) <= max_side:
        return pixels
    f = max_side / max(h, w)
    size = (max(1, round(w * f)), max(1, round(h * f)))
    return np.asarray(cv2.resize(pixels, size, interpolation=cv2.INTER_AREA), np.uint8)


def png_bytes(pixels: ImageArray, max_side: int | None = None) -> bytes:
    """``pixels`` as PNG (scaled down to ``max_side`` on the long side when given)."""
    return encode_image(pixels if max_side is None else limit(pixels, max_side), "png")


def decode_output(data: bytes, provider: str, max_pixels: int) -> ImageArray:
    """A provider's output as RGB(A) pixels; garbage is a provider failure (not the caller's
    4xx)."""
    try:
        return decode_image(data, ImageLimits(MAX_OUTPUT_BYTES, max_pixels)).pixels
    except ImageInputError as exc:
        raise ProviderFailure(provider, f"the output is not a usable image ({exc})") from None


class RoutedEngine:
    """The common part: the wrapped offline engine, the route, the fallback. Subclasses
    implement :meth:`_provider_run`; :func:`bind` gives each instance the wrapped engine's
    ``name`` and ``Params``."""

    name: ClassVar[str] = ""
    Params: ClassVar[type[BaseModel]] = BaseModel
    providers: ClassVar[tuple[str, ...]] = ()

    def __init__(self, inner: Engine, route: Route, backends: Backends, fallback: Fallback):
        self.inner = inner
        self.route = route
        self.backends = backends
        self.fallback = fallback

    def load(self) -> None:
        """Nothing to load for the provider; the offline engine loads when it is needed."""

    def validate(self, params: BaseModel) -> None:
        self.inner.validate(params)

    def run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        try:
            return self._provider_run(inputs, params)
        except ProviderFailure as exc:
            return self._fall_back(exc, lambda: self._offline(inputs, params))

    def _offline(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        self.inner.load()
        return self.inner.run(inputs, params)

    def _fall_back(self, exc: ProviderFailure, offline: Callable[[], EngineResult]) -> EngineResult:
        stop_if_cancelled(exc, self.route)
        log.warning("%s: %s failed: %s", self.route.operation, self.route.label, exc)
        if self.fallback == "error":
            raise ProviderError(
                f"{self.route.operation} failed at its backend {self.route.label}: {exc}",
                unavailable=exc.unavailable,
            ) from exc
        result = offline()
        return EngineResult(result.images, fallback_details(result.details, self.route, exc))

    def _provider_run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        raise NotImplementedError

    def _details(self, method: str, **more: Any) -> dict[str, Any]:
        return {"method": method, "provider": self.route.label, **more}


def stop_if_cancelled(exc: ProviderFailure, route: Route) -> None:
    """A cancelled call (the job was cancelled, the server is stopping) ends there: no
    offline fallback runs for work nobody waits for."""
    if isinstance(exc, Cancelled):
        raise ProviderError(
            f"{route.operation} was cancelled at its backend {route.label}", unavailable=True
        ) from exc


def fallback_details(details: dict[str, Any], route: Route, exc: ProviderFailure) -> dict[str, Any]:
    """The offline result's details, saying the provider failed and the offline engine ran."""
    return {
        **details,
        "method": f"{details.get('method', '')} (offline fallback: {route.label} failed)",
        "provider": "offline",
        "provider_failed": {"provider": route.label, "error": str(exc)},
    }


# ---- vision-language (OpenAI-compatible chat) -------------------------------------------------


class VisionAnalysis(BaseModel):
    """What a vision-language model is asked for by ``analyze``."""

    objects: list[str] = Field(min_length=1, description="the things in the picture, named")
    description: str = Field(min_length=1, description="two or three plain sentences")
    alt_text: str = Field(min_length=1, description="accessible alt text, one sentence")
    mood: str = Field(min_length=1, description="a few words")
    categories: list[str] = Field(default_factory=list, description="e.g. portrait, product")


ANALYZE_INSTRUCTIONS = (
    "You describe images for an image-processing API. Look at the image and answer with one "
    'JSON object only, matching this JSON schema: {schema}. Name concrete things ("a ginger '
    'cat", "a red sofa"), never "an object" or "a subject".'
)


class VisionAnalyzeEngine(RoutedEngine):
    """``analyze``: the offline measurements (palette, quality, composition, text, faces) plus
    named objects, description, alt text and mood from the vision-language model."""

    providers = ("openai",)

    def run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        measured = self._offline(inputs, params)
        try:
            vision = self.backends.get_openai().chat_json(
                self.route.model,
                ANALYZE_INSTRUCTIONS.format(schema=schema_hint(VisionAnalysis)),
                "Analyse this image.",
                VisionAnalysis,
                image_png=png_bytes(inputs.image, VISION_SIDE),
                cancel=self.backends.token(),
            )
        except ProviderFailure as exc:
            return self._fall_back(exc, lambda: measured)
        facts = measured.details
        details: dict[str, Any] = {
            **facts,
            "objects": vision.objects,
            "measured_objects": facts.get("objects", []),
            "description": vision.description,
            "accessibility_alt_text": vision.alt_text,
            "mood": vision.mood,
            "categories": list(dict.fromkeys([*facts.get("categories", []), *vision.categories])),
            "method": (
                f"vision-language model {self.route.label} (named objects, description, alt "
                f"text, mood) + {facts.get('method', 'classical measurements')}"
            ),
            "provider": self.route.label,
        }
        return EngineResult(measured.images, details)


class VisionPrompts(BaseModel):
    """What a vision-language model is asked for by ``image_to_prompt``."""

    subject: str = Field(min_length=1, description="the main subject, named, a few words")
    general: str = Field(min_length=1, description="one plain descriptive sentence")
    flux: str = Field(min_length=1, description="descriptive natural language for FLUX")
    midjourney: str = Field(min_length=1, description="comma phrases, no parameters")
    stable_diffusion_positive: str = Field(min_length=1, description="comma-separated tags")
    stable_diffusion_negative: str = Field(min_length=1, description="comma-separated tags")


PROMPT_INSTRUCTIONS = (
    "You write text-to-image prompts that would recreate a given image. Answer with one JSON "
    "object only, matching this JSON schema: {schema}. Name the subject concretely."
)


class VisionPromptEngine(RoutedEngine):
    """``image_to_prompt``: the four prompt variants written by the vision-language model."""

    providers = ("openai",)

    def _provider_run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        answer = self.backends.get_openai().chat_json(
            self.route.model,
            PROMPT_INSTRUCTIONS.format(schema=schema_hint(VisionPrompts)),
            "Write the prompts for this image.",
            VisionPrompts,
            image_png=png_bytes(inputs.image, VISION_SIDE),
            cancel=self.backends.token(),
        )
        h, w = inputs.image.shape[:2]
        ratio = aspect_ratio(w, h)
        midjourney = answer.midjourney.strip()
        if "--ar" not in midjourney:
            midjourney = f"{midjourney} --ar {ratio}"
        prompts = {
            "general": answer.general,
            "flux": answer.flux,
            "midjourney": midjourney,
            "stable_diffusion": {
                "positive": answer.stable_diffusion_positive,
                "negative": answer.stable_diffusion_negative,
            },
        }
        return EngineResult(
            [],
            self._details(
                f"prompts written by the vision-language model {self.route.label}",
                prompts=prompts,
                analysis={"width": w, "height": h, "subject": answer.subject},
            ),
        )


# ---- storefront product copy (OpenAI-compatible chat) -----------------------------------------

PRODUCT_TEXT_INSTRUCTIONS = (
    "You write product copy for an online store. From the product's title, its current "
    "description and tags{photo}, write what is asked. Say only what the title, the "
    "description, the tags or the photo show: no invented materials, sizes, certifications or "
    "claims. Answer with one JSON object only, matching this JSON schema: {schema}."
)
"""The system message of ``product_text``; the schema holds only the fields asked for."""

FIELD_SPECS: dict[str, tuple[Any, Any]] = {
    "description": (
        str,
        Field(
            min_length=1,
            max_length=2000,
            description="the product description for the store page, plain text, 2-5 sentences",
        ),
    ),
    "tags": (
        list[Annotated[str, Field(min_length=1, max_length=60)]],
        Field(min_length=1, max_length=50, description="search tags, lower case, no duplicates"),
    ),
    "alt_text": (
        str,
        Field(min_length=1, max_length=250, description="alt text of the product photo"),
    ),
}


def product_copy_schema(fields: list[str]) -> type[BaseModel]:
    """A Pydantic model with exactly the asked fields, each required."""
    spec: dict[str, Any] = {f: FIELD_SPECS[f] for f in fields}
    model: type[BaseModel] = create_model("ProductCopy", **spec)
    return model


def clean_tags(tags: list[str], limit: int) -> list[str]:
    """Tags stripped, without case-insensitive repeats, at most ``limit``."""
    seen: dict[str, str] = {}
    for tag in tags:
        text = " ".join(tag.split())
        if text and text.lower() not in seen:
            seen[text.lower()] = text
    return list(seen.values())[:limit]


class ProductTextRoutedEngine(RoutedEngine):
    """``product_text``: the storefront's description, tags and alt text written by a
    language model (with the photo when there is one and ``use_image``), JSON validated."""

    providers = ("openai",)

    def _provider_run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        fields = [str(f) for f in getattr(params, "fields", [])]
        pixels = inputs.image
        with_photo = bool(getattr(params, "use_image", True)) and min(pixels.shape[:2]) > 1
        max_tags = int(getattr(params, "max_tags", 12))
        product = {
            "title": str(getattr(params, "title", "")),
            "description": str(getattr(params, "description", "") or "")[:4000],
            "tags": [str(t) for t in getattr(params, "tags", [])][:100],
            "write": fields,
            "max_tags": max_tags,
        }
        schema = product_copy_schema(fields)
        answer = self.backends.get_openai().chat_json(
            self.route.model,
            PRODUCT_TEXT_INSTRUCTIONS.format(
                photo=" and its photo" if with_photo else "", schema=schema_hint(schema)
            ),
            "The product, as JSON: " + json.dumps(product, ensure_ascii=False),
            schema,
            image_png=png_bytes(pixels, VISION_SIDE) if with_photo else None,
            cancel=self.backends.token(),
        )
        written = answer.model_dump()
        details: dict[str, Any] = {
            "method": (
                f"language model {self.route.label} (chat completions, JSON validated) from the "
                f"product's title, description and tags{' and its photo' if with_photo else ''}"
            ),
            "provider": self.route.label,
        }
        for name in fields:
            value = written[name]
            details[name] = (
                clean_tags(value, max_tags) if name == "tags" else " ".join(str(value).split())
            )
        return EngineResult([], details)


# ---- image to image (images API, Replicate, ComfyUI) ----------------------------------------


def _mask_png(image: ImageArray, kind: str) -> bytes:
    """The images API's edit mask: opaque where the subject stays, transparent where the
    background is to be replaced (the offline subject matte)."""
    matte = subject_matte(image, kind)  # type: ignore[arg-type]
    alpha = np.clip(matte.alpha * 255.0 + 0.5, 0, 255).astype(np.uint8)
    rgba = np.dstack([image[..., :3], alpha])
    buffer = io.BytesIO()
    Image.fromarray(rgba, "RGBA").save(buffer, format="PNG")
    return buffer.getvalue()


class ImageEngine(RoutedEngine):
    """An image in, the provider's image out: ``edit``, ``image_to_image``,
    ``replace_background`` (openai, replicate, comfyui) and the single-image operations an
    operator maps to Replicate or ComfyUI (``upscale``, ``colorize``, ``background_removal``...)."""

    providers = ("openai", "replicate", "comfyui")

    def validate(self, params: BaseModel) -> None:
        """The offline engine's checks, except the offline edit grammar: a generative model
        takes any instruction ("add snow"). Should it fail and the offline engine run instead,
        an instruction that engine cannot follow is a 422 with the credits released."""
        if self.route.operation in ("edit", "image_to_image"):
            if not str(getattr(params, "prompt", "") or "").strip():
                raise EngineError("a prompt is needed")
            return
        self.inner.validate(params)

    def _prompt(self, params: BaseModel) -> str | None:
        prompt = getattr(params, "prompt", None)
        if not isinstance(prompt, str) or not prompt.strip():
            return None
        if self.route.operation == "replace_background":
            return (
                f"Replace the background with: {prompt.strip()}. Keep the subject exactly as it "
                "is, with natural light and shadows matching the new background."
            )
        return prompt.strip()

    def _provider_run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        route, backends = self.route, self.backends
        image = limit(inputs.image, IMAGE_SIDE)  # the mask is made at the size sent
        prompt = self._prompt(params)
        seed = int(getattr(params, "seed", 0) or 0)
        sent: list[str] = ["image"]
        if route.provider == "openai":
            if prompt is None:
                raise ProviderFailure("openai", "the images API needs a prompt")
            mask = None
            if route.operation == "replace_background":
                mask = _mask_png(image, str(getattr(params, "type", "auto")))
                sent.append("mask")
            data = backends.get_openai().edit_image(
                route.model, png_bytes(image), prompt, mask_png=mask, cancel=backends.token()
            )
            how = "the OpenAI images API (edits" + (", subject kept by a mask)" if mask else ")")
        elif route.provider == "replicate":
            replicate = backends.get_replicate()
            values: dict[str, Any] = {
                "image": replicate.file_input(png_bytes(image), "image/png", backends.token())
            }
            if prompt is not None:
                values["prompt"] = prompt
            scale = getattr(params, "scale", None)
            if isinstance(scale, int):
                values["scale"] = scale
            sent = sorted(values)
            output = replicate.run(route.model, values, backends.token())
            data = replicate.fetch_files(output, backends.token())[0]
            how = "a Replicate prediction"
        else:
            images = {"image": png_bytes(image)}
            if route.operation == "replace_background":
                images["mask"] = _mask_png(image, str(getattr(params, "type", "auto")))
            comfy_values = {"prompt": prompt or "", "negative_prompt": "", "seed": seed}
            sent = sorted([*images, *comfy_values])
            data = backends.get_comfyui().run(route.model, images, comfy_values, backends.token())[
                0
            ]
            how = "a ComfyUI workflow"
        pixels = decode_output(data, route.provider, backends.max_pixels)
        out_h, out_w = pixels.shape[:2]
        preferred = "png" if pixels.shape[2] == 4 else None
        details = self._details(
            f"generative model {route.label} through {how}",
            provider_inputs=sent,
            width=out_w,
            height=out_h,
        )
        if prompt is not None:
            details["prompt"] = getattr(params, "prompt", None)
        return EngineResult([OutputImage(pixels, preferred_format=preferred)], details)


# ---- try-on (Replicate, ComfyUI) -------------------------------------------------------------


class TryOnRoutedEngine(RoutedEngine):
    """``tryon``: one provider run per output (seed + position), the person image and the
    garment as inputs. Also a multi-image engine: the job runner renders one output at a time
    and, when a render fails with ``fallback=offline``, renders the offline engine's output
    at that position instead."""

    providers = ("replicate", "comfyui")

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
        if route.provider == "replicate":
            replicate = backends.get_replicate()
            values = {
                "human_img": replicate.file_input(
                    png_bytes(inputs.image, IMAGE_SIDE), "image/png", backends.token()
                ),
                "garm_img": replicate.file_input(
                    png_bytes(garment, IMAGE_SIDE), "image/png", backends.token()
                ),
                "garment_des": description,
                "seed": seed,
            }
            output = replicate.run(route.model, values, backends.token())
            data = replicate.fetch_files(output, backends.token())[0]
        else:
            data = backends.get_comfyui().run(
                route.model,
                {
                    "image": png_bytes(inputs.image, IMAGE_SIDE),
                    "garment": png_bytes(garment, IMAGE_SIDE),
                },
                {"prompt": description, "negative_prompt": "", "seed": seed},
                backends.token(),
            )[0]
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
            stop_if_cancelled(exc, self.route)
            log.warning("tryon: %s failed: %s", self.route.label, exc)
            if self.fallback == "error":
                # The job runner records a failed image (its credit released) and goes on.
                raise EngineError(f"{self.route.label} failed: {exc}") from exc
            out = offline.get()[position].render()
            data = {**out.data, "provider": "offline", "provider_failed": str(exc)}
            return OutputImage(out.pixels, out.label, out.preferred_format, out.score, data)


ENGINE_KINDS: dict[str, type[RoutedEngine]] = {
    "analyze": VisionAnalyzeEngine,
    "image_to_prompt": VisionPromptEngine,
    "edit": ImageEngine,
    "image_to_image": ImageEngine,
    "replace_background": ImageEngine,
    "tryon": TryOnRoutedEngine,
    "product_text": ProductTextRoutedEngine,
}
"""The engine class of each routable operation; the single-image operations below route
through :class:`ImageEngine` to Replicate or ComfyUI only."""

SINGLE_IMAGE_OPERATIONS = (
    "background_removal",
    "make_transparent",
    "upscale",
    "colorize",
    "unblur",
    "enhance",
    "text_removal",
    "style_transfer",
)


def engine_kind(route: Route) -> type[RoutedEngine]:
    """The routed engine class for ``route``; ``ValueError`` naming the setting when the
    operation cannot be routed there."""
    setting = f"PIXELMILL_ROUTE_{route.operation.upper()}"
    kind = ENGINE_KINDS.get(route.operation)
    providers: tuple[str, ...]
    if kind is None and route.operation in SINGLE_IMAGE_OPERATIONS:
        kind, providers = ImageEngine, ("replicate", "comfyui")
    elif kind is None:
        raise ValueError(f"{setting}: {route.operation} cannot be routed to a provider")
    else:
        providers = kind.providers
    if route.provider not in providers:
        raise ValueError(
            f"{setting}: {route.operation} can be routed to {', '.join(providers)}, "
            f"not {route.provider}"
        )
    return kind


def bind(
    kind: type[RoutedEngine], inner: Engine, route: Route, backends: Backends, fallback: Fallback
) -> RoutedEngine:
    """An instance of ``kind`` carrying ``inner``'s ``name`` and ``Params`` as class
    attributes, as the :class:`Engine` protocol declares them."""
    bound = type(
        f"{kind.__name__}_{route.operation}",
        (kind,),
        {"name": inner.name, "Params": inner.Params, "__module__": __name__},
    )
    engine: RoutedEngine = bound(inner, route, backends, fallback)
    return engine
