"""The hosted variant of an engine, run when its operation is routed to a provider
(``PIXELMILL_ROUTE_<OPERATION>``): the one route-and-fallback path. A :class:`HostedEngine`
wraps the offline engine behind the same protocol (same ``name``, ``Params``, ``validate``), so
the pipeline, the job kinds, the prices and the credits do not change. When the provider fails,
``fallback=offline`` runs the offline engine and says so in ``details`` (``provider:
"offline"``, ``provider_failed``); ``fallback=error`` raises :class:`ProviderError` (502/503),
or for one output of a job an :class:`EngineError` the runner records; a cancelled call ends
there. What a capability asks and how the answer maps back is its own ``hosted.py``; the
clients come from the wiring (:class:`~pixelmill.providers.routing.Backends`); docs/backends.md.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import partial
from typing import Any, ClassVar, NamedTuple

import cv2
import numpy as np
from pydantic import BaseModel

from pixelmill.engines.base import (
    Engine,
    EngineError,
    EngineInputs,
    EngineResult,
    ImageArray,
    OutputImage,
    PlannedImage,
)
from pixelmill.engines.runtime.lazy import Lazy
from pixelmill.engines.runtime.person import sight
from pixelmill.errors import ProviderError
from pixelmill.providers.http import Cancelled, ProviderFailure
from pixelmill.providers.media import IMAGE_SIDE, decode_output, limit, png_bytes
from pixelmill.providers.routing import Backends, Fallback, Route
from pixelmill.providers.usage import collecting

log = logging.getLogger("pixelmill.providers")


class Hosted:
    """What every hosted variant shares: the route, the provider clients, the fallback, and
    what happens when a provider call fails."""

    providers: ClassVar[tuple[str, ...]] = ()
    """The providers this capability speaks (a route to another is refused at startup)."""
    workflow_inputs: ClassVar[frozenset[str]] = frozenset({"image"})
    """The placeholders a ComfyUI workflow of this operation must have (checked at startup)."""

    def __init__(self, route: Route, backends: Backends, fallback: Fallback):
        self.route = route
        self.backends = backends
        self.fallback = fallback

    def _failed(self, exc: ProviderFailure) -> None:
        """A failed call: a cancelled one ends the run (no offline fallback runs for work
        nobody waits for); otherwise logged."""
        if isinstance(exc, Cancelled):
            raise ProviderError(
                f"{self.route.operation} was cancelled at its backend {self.route.label}",
                unavailable=True,
            ) from exc
        log.warning("%s: %s failed: %s", self.route.operation, self.route.label, exc)

    def output_failed(self, exc: ProviderFailure, error: str) -> None:
        """One output of a job failed at the provider: returns when the offline output should
        be made instead; raises :class:`EngineError` (``error: <reason>``) with
        ``fallback=error``, which the job runner records as that output's failure (its credit
        released)."""
        self._failed(exc)
        if self.fallback == "error":
            raise EngineError(f"{error}: {exc}") from exc

    def fallback_details(self, details: dict[str, Any], exc: ProviderFailure) -> dict[str, Any]:
        """The offline result's details, saying the provider failed and the offline engine
        ran."""
        return {
            **details,
            "method": f"{details.get('method', '')} (offline fallback: {self.route.label} failed)",
            "provider": "offline",
            "provider_failed": {"provider": self.route.label, "error": str(exc)},
        }

    def _details(self, method: str, **more: Any) -> dict[str, Any]:
        return {"method": method, "provider": self.route.label, **more}

    def _replicate(self, values: dict[str, Any]) -> bytes:
        """One prediction of the route's model, ``bytes`` values sent as PNG files (data URLs
        or uploads); the first file of its output."""
        replicate, token = self.backends.get_replicate(), self.backends.token
        sent = {
            k: replicate.file_input(v, "image/png", token()) if isinstance(v, bytes) else v
            for k, v in values.items()
        }
        return replicate.fetch_files(replicate.run(self.route.model, sent, token()), token())[0]

    def _comfyui(self, images: dict[str, bytes], values: dict[str, Any]) -> bytes:
        """One run of the route's workflow; its first output image."""
        comfyui = self.backends.get_comfyui()
        return comfyui.run(self.route.model, images, values, self.backends.token())[0]


class HostedEngine(Hosted):
    """A hosted engine in front of the offline engine it wraps. Subclasses implement
    :meth:`_provider_run` (or ``run``); :func:`bind` gives each instance the wrapped engine's
    ``name`` and ``Params``."""

    name: ClassVar[str] = ""
    Params: ClassVar[type[BaseModel]] = BaseModel

    def __init__(self, inner: Engine, route: Route, backends: Backends, fallback: Fallback):
        super().__init__(route, backends, fallback)
        self.inner = inner

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
        """The whole run failed at the provider: :class:`ProviderError` with
        ``fallback=error``, else the offline result saying so."""
        self._failed(exc)
        if self.fallback == "error":
            raise ProviderError(
                f"{self.route.operation} failed at its backend {self.route.label}: {exc}",
                unavailable=exc.unavailable,
            ) from exc
        result = offline()
        return EngineResult(result.images, self.fallback_details(result.details, exc))

    def _provider_run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        raise NotImplementedError


class HostedImage(HostedEngine):
    """An image in, the provider's image out (Replicate or ComfyUI): the single-image
    operations an operator maps to a model (``upscale``, ``colorize``,
    ``background_removal``...). ``edit`` and ``replace_background`` add the OpenAI images API
    (their ``hosted.py``)."""

    providers: ClassVar[tuple[str, ...]] = ("replicate", "comfyui")

    def _prompt(self, params: BaseModel) -> str | None:
        prompt = getattr(params, "prompt", None)
        if not isinstance(prompt, str) or not prompt.strip():
            return None
        return prompt.strip()

    def _mask(self, image: ImageArray, params: BaseModel) -> bytes | None:
        """The mask sent beside the image (as the images API's ``mask``, ComfyUI's
        ``{{mask}}``); none by default."""
        return None

    def _provider_run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        route, backends = self.route, self.backends
        image = limit(inputs.image, IMAGE_SIDE)  # the mask is made at the size sent
        prompt = self._prompt(params)
        seed = int(getattr(params, "seed", 0) or 0)
        sent: list[str] = ["image"]
        if route.provider == "openai":
            if prompt is None:
                raise ProviderFailure("openai", "the images API needs a prompt")
            mask = self._mask(image, params)
            if mask is not None:
                sent.append("mask")
            data = backends.get_openai().edit_image(
                route.model, png_bytes(image), prompt, mask_png=mask, cancel=backends.token()
            )
            how = "the OpenAI images API (edits" + (", subject kept by a mask)" if mask else ")")
        elif route.provider == "replicate":
            values: dict[str, Any] = {"image": png_bytes(image)}
            if prompt is not None:
                values["prompt"] = prompt
            scale = getattr(params, "scale", None)
            if isinstance(scale, int):
                values["scale"] = scale
            sent = sorted(values)
            data = self._replicate(values)
            how = "a Replicate prediction"
        else:
            images = {"image": png_bytes(image)}
            mask = self._mask(image, params)
            if mask is not None:
                images["mask"] = mask
            comfy_values = {"prompt": prompt or "", "negative_prompt": "", "seed": seed}
            sent = sorted([*images, *comfy_values])
            data = self._comfyui(images, comfy_values)
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


BLANK_STD = 1.0
"""A picture whose every channel varies less than this (0-255) is one flat colour: blank."""
RESEED = 7919
"""A rejected output's second try uses its seed plus this (a different draw, still
reproducible)."""


class OutputRejected(ProviderFailure):
    """The provider answered a picture that fails a quality gate (blank, no person): tried
    once more on another seed, then handled as any provider failure."""


def fit_frame(pixels: ImageArray, width: int, height: int) -> ImageArray:
    """The centre crop of a provider's picture (RGB) at the frame's aspect, scaled to
    ``width`` × ``height`` (a scene's square, an avatar's 3:4)."""
    rgb = pixels[..., :3]
    h, w = rgb.shape[:2]
    if w * height > h * width:  # wider than the frame: keep the full height
        cw, ch = round(h * width / height), h
    else:
        cw, ch = w, round(w * height / width)
    y, x = (h - ch) // 2, (w - cw) // 2
    crop = np.ascontiguousarray(rgb[y : y + ch, x : x + cw])
    if (cw, ch) == (width, height):
        return crop
    interp = cv2.INTER_AREA if ch > height else cv2.INTER_CUBIC
    return np.asarray(cv2.resize(crop, (width, height), interpolation=interp), dtype=np.uint8)


def fit_portrait(pixels: ImageArray, height: int) -> ImageArray:
    """:func:`fit_frame` at ``3/4·height`` × ``height``: every person-shaped output (avatars,
    product photos)."""
    return fit_frame(pixels, round(height * 3 / 4), height)


def person_gate(pixels: ImageArray, provider: str) -> dict[str, list[float]]:
    """The body landmarks (output pixels) of the person in a provider's picture, found by the
    one person finder's pose (``runtime.person.sight``); :class:`ProviderFailure` when it shows
    no person, so that output is not delivered as it is (offline fallback, or no charge)."""
    seen = sight(pixels, "no person")
    if not seen.is_person:
        raise OutputRejected(provider, "the model's picture shows no person")
    k = seen.scale
    return {name: [round(x / k, 2), round(y / k, 2)] for name, (x, y) in seen.landmarks.items()}


class OutputCall(NamedTuple):
    """One output of a multi-image call: the call's inputs and parameters, the output's place
    and label, the call's shared preparation and the output's seed."""

    inputs: EngineInputs
    params: BaseModel
    position: int
    label: str
    prepared: Any
    seed: int


class HostedMultiImage(HostedEngine):
    """A multi-image engine at a provider (scenes, avatars, try-on): one provider run per
    output. ``plan`` prepares once (:meth:`_prepare`) and plans one output per position, each
    rendered on its own by :meth:`_one`; when one fails with ``fallback=offline`` the offline
    engine's output at that position is rendered instead (its plan made once, on the first
    failure), with ``fallback=error`` that output fails (its credit released)."""

    def _prepare(self, inputs: EngineInputs, params: BaseModel) -> Any:
        """The shared preparation of a call's outputs (a cut-out, say); default: none."""
        return None

    def _labels(self, inputs: EngineInputs, params: BaseModel) -> list[str]:
        count = int(getattr(params, "num_outputs", 1))
        return [f"{self.route.operation} {i + 1}" for i in range(count)]

    def _one(self, call: OutputCall) -> OutputImage:
        """One output at the provider, gated by the subclass (a person, say)."""
        raise NotImplementedError

    def _method(self) -> str:
        how = {
            "openai": "the OpenAI images API",
            "replicate": "Replicate predictions",
            "comfyui": "ComfyUI workflows",
        }[self.route.provider]
        return f"generative model {self.route.label} ({how}, one run per output)"

    def _seed(self, params: BaseModel, position: int) -> int:
        return int(getattr(params, "seed", 0) or 0) + position

    def plan(self, inputs: EngineInputs, params: BaseModel) -> list[PlannedImage]:
        self.inner.validate(params)
        prepared = self._prepare(inputs, params)
        offline: Lazy[list[PlannedImage]] = Lazy(partial(self._offline_plan, inputs, params))
        return [
            PlannedImage(
                i, label, partial(self._render, inputs, params, i, label, prepared, offline)
            )
            for i, label in enumerate(self._labels(inputs, params))
        ]

    def _provider_run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        self.inner.validate(params)
        prepared = self._prepare(inputs, params)
        labels = self._labels(inputs, params)
        images = [
            self._checked(
                self._one(OutputCall(inputs, params, i, lab, prepared, self._seed(params, i)))
            )
            for i, lab in enumerate(labels)
        ]
        h, w = images[0].pixels.shape[:2]
        facts = {"seed": self._seed(params, 0), "width": w, "height": h, **self._facts(params)}
        return EngineResult(images, self._details(self._method(), **facts))

    def _facts(self, params: BaseModel) -> dict[str, Any]:
        """More of a whole run's details (the try-on's category, say)."""
        return {}

    def _checked(self, out: OutputImage) -> OutputImage:
        """The gate every routed output passes: not blank (one flat colour)."""
        if float(out.pixels[..., :3].std(axis=(0, 1)).max()) < BLANK_STD:
            raise OutputRejected(self.route.provider, "the model's picture is blank")
        return out

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
        label: str,
        prepared: Any,
        offline: Lazy[list[PlannedImage]],
    ) -> OutputImage:
        call = OutputCall(inputs, params, position, label, prepared, self._seed(params, position))
        started = time.perf_counter()
        try:
            with collecting() as usage:
                try:
                    out = self._checked(self._one(call))
                except OutputRejected as exc:  # one more try, on another seed
                    log.info("%s: %s, trying again: %s", self.route.operation, label, exc)
                    out = self._checked(self._one(call._replace(seed=call.seed + RESEED)))
            spent = {"provider": self.route.label, **usage}
            spent["provider_s"] = round(time.perf_counter() - started, 3)
            return OutputImage(
                out.pixels, out.label, out.preferred_format, out.score, {**out.data, "usage": spent}
            )
        except ProviderFailure as exc:
            self.output_failed(exc, f"{self.route.label} failed")
            out = offline.get()[position].render()
            data = {**out.data, "provider": "offline", "provider_failed": str(exc)}
            return OutputImage(out.pixels, out.label, out.preferred_format, out.score, data)


def bind(
    kind: type[HostedEngine], inner: Engine, route: Route, backends: Backends, fallback: Fallback
) -> HostedEngine:
    """An instance of ``kind`` carrying ``inner``'s ``name`` and ``Params`` as class
    attributes, as the :class:`Engine` protocol declares them."""
    bound = type(
        f"{kind.__name__}_{route.operation}",
        (kind,),
        {"name": inner.name, "Params": inner.Params, "__module__": kind.__module__},
    )
    engine: HostedEngine = bound(inner, route, backends, fallback)
    return engine
