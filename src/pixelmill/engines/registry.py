"""The engine registry: engine name -> a shared instance. Engines load their models lazily on
first use (``load()`` is idempotent and locked), so building the registry is cheap."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pixelmill.engines.ads import AdEngine
from pixelmill.engines.analyze import AnalyzeEngine
from pixelmill.engines.analyze.hosted import AnalyzeHosted
from pixelmill.engines.avatar import GuidedAvatarEngine, ReferenceAvatarEngine
from pixelmill.engines.avatar.hosted import GuidedAvatarHosted, ReferenceAvatarHosted
from pixelmill.engines.background import BackgroundRemovalEngine, MakeTransparentEngine
from pixelmill.engines.base import Engine
from pixelmill.engines.colorize import ColorizeEngine
from pixelmill.engines.convert import ConvertEngine
from pixelmill.engines.deblur import UnblurEngine
from pixelmill.engines.edit import EditEngine
from pixelmill.engines.edit.hosted import EditHosted
from pixelmill.engines.enhance import EnhanceEngine
from pixelmill.engines.product_photo import ProductPhotoEngine
from pixelmill.engines.product_photo.hosted import ProductPhotoHosted
from pixelmill.engines.product_text import AdCopyEngine, ProductTextEngine
from pixelmill.engines.product_text.hosted import AdCopyHosted, ProductTextHosted
from pixelmill.engines.prompt import ImageToPromptEngine
from pixelmill.engines.prompt.hosted import PromptHosted
from pixelmill.engines.replace_background import ReplaceBackgroundEngine
from pixelmill.engines.replace_background.hosted import ReplaceBackgroundHosted
from pixelmill.engines.runtime.fonts import use_font_dir
from pixelmill.engines.runtime.hosted import HostedEngine, HostedImage, bind
from pixelmill.engines.runtime.onnx import use_providers
from pixelmill.engines.scenes import ScenesEngine
from pixelmill.engines.scenes.hosted import ScenesHosted
from pixelmill.engines.silo import SiloEngine
from pixelmill.engines.speech import SpeechEngine
from pixelmill.engines.speech.hosted import SpeechHosted
from pixelmill.engines.style import StyleTransferEngine
from pixelmill.engines.text_removal import TextRemovalEngine
from pixelmill.engines.tryon import TryOnEngine
from pixelmill.engines.tryon.hosted import TryOnHosted
from pixelmill.engines.upscale import UpscaleEngine
from pixelmill.engines.video import TalkingVideoEngine
from pixelmill.engines.video.hosted import HostedVideo
from pixelmill.providers.routing import Backends, Fallback, Route, check_route


def build_engines(
    models_dir: Path | None = None,
    font_dir: Path | None = None,
    onnx_providers: str | None = None,
) -> dict[str, Engine]:
    """Every engine; ``models_dir`` (``PIXELMILL_MODELS_DIR``) may hold catalogued open models
    (:mod:`pixelmill.models`) the engines prefer, ``font_dir`` (``PIXELMILL_FONT_DIR``) more
    fonts; ``onnx_providers`` (``PIXELMILL_ONNX_PROVIDERS``) where ONNX sessions run."""
    use_font_dir(font_dir)
    use_providers(onnx_providers)
    engines: list[Engine] = [
        BackgroundRemovalEngine(models_dir),
        MakeTransparentEngine(),
        UpscaleEngine(models_dir),
        TextRemovalEngine(),
        ConvertEngine(),
        EnhanceEngine(models_dir=models_dir),
        UnblurEngine(),
        ColorizeEngine(models_dir),
        StyleTransferEngine(),
        AnalyzeEngine(),
        ImageToPromptEngine(),
        EditEngine(),
        ReplaceBackgroundEngine(),
        ScenesEngine(),
        SiloEngine(),
        GuidedAvatarEngine(),
        ReferenceAvatarEngine(),
        ProductPhotoEngine(),
        TryOnEngine(),
        AdEngine(),
        ProductTextEngine(),
        AdCopyEngine(),
        SpeechEngine(),
        TalkingVideoEngine(),
    ]
    return {e.name: e for e in engines}


HOSTED: dict[str, type[HostedEngine]] = {
    "analyze": AnalyzeHosted,
    "image_to_prompt": PromptHosted,
    "edit": EditHosted,
    "image_to_image": EditHosted,
    "replace_background": ReplaceBackgroundHosted,
    "tryon": TryOnHosted,
    "scenes": ScenesHosted,
    "avatar_guided": GuidedAvatarHosted,
    "avatar_reference": ReferenceAvatarHosted,
    "product_photo": ProductPhotoHosted,
    "product_text": ProductTextHosted,
    "ad_copy": AdCopyHosted,
    "background_removal": HostedImage,
    "make_transparent": HostedImage,
    "upscale": HostedImage,
    "colorize": HostedImage,
    "unblur": HostedImage,
    "enhance": HostedImage,
    "text_removal": HostedImage,
    "style_transfer": HostedImage,
    "speech": SpeechHosted,
    "video": HostedVideo,
}
"""The routing table: operation -> its capability's hosted variant (``engines/<cap>/hosted.py``).
One line makes an operation routable (``PIXELMILL_ROUTE_<OPERATION>``)."""


_GPT_IMAGE = "openai:gpt-image-1"
_CHAT = "openai:gpt-4o-mini"

PROFILES: dict[str, dict[str, str]] = {
    "offline": {},
    "openai": {
        "analyze": _CHAT,
        "image_to_prompt": _CHAT,
        "product_text": _CHAT,
        "ad_copy": _CHAT,
        "edit": _GPT_IMAGE,
        "image_to_image": _GPT_IMAGE,
        "replace_background": _GPT_IMAGE,
        "scenes": _GPT_IMAGE,
        "avatar_guided": _GPT_IMAGE,
        "avatar_reference": _GPT_IMAGE,
        "product_photo": _GPT_IMAGE,
        "speech": "openai:gpt-4o-mini-tts",
    },
    "replicate": {
        "scenes": "replicate:black-forest-labs/flux-fill-pro",
        "avatar_guided": "replicate:black-forest-labs/flux-schnell",
        "avatar_reference": "replicate:black-forest-labs/flux-kontext-pro",
        "product_photo": "replicate:flux-kontext-apps/multi-image-kontext-pro",
    },
    "comfyui": {
        "scenes": "comfyui:scenes.json",
        "avatar_guided": "comfyui:avatar_guided.json",
        "avatar_reference": "comfyui:avatar_reference.json",
        "edit": "comfyui:edit.json",
        "image_to_image": "comfyui:edit.json",
        "upscale": "comfyui:upscale.json",
        "product_photo": "comfyui:product_photo.json",
        "tryon": "comfyui:tryon.json",
    },
}
"""``PIXELMILL_BACKEND_PROFILE``: the default route of every operation each backend serves
(Replicate: official models only, which run without a version; the ComfyUI workflows ship in
``providers/workflows/``). Names checked 2026-11-27; docs/backends.md says how."""


def route(
    engines: Mapping[str, Engine],
    routes: list[Route],
    backends: Backends,
    fallback: Fallback,
    engine_of: Mapping[str, str],
) -> dict[str, Engine]:
    """``engines`` with each route's hosted engine in front of its operation's offline engine
    (``engine_of``: from the catalog; an operation outside it, such as ``video``, is its
    engine's name), under the *operation's* name (``image_to_image`` may be routed apart from
    ``edit``; ``operations.params.engine_for`` looks that name up first). A route that cannot
    run is a ``ValueError`` naming its setting."""
    routed = dict(engines)
    for r in routes:
        kind = HOSTED.get(r.operation)
        if kind is None and r.operation not in engine_of:
            raise ValueError(f"{r.setting}: there is no operation named {r.operation}")
        if kind is None:
            raise ValueError(f"{r.setting}: {r.operation} cannot be routed to a provider")
        if r.provider not in kind.providers:
            raise ValueError(
                f"{r.setting}: {r.operation} can be routed to {', '.join(kind.providers)}, "
                f"not {r.provider}"
            )
        check_route(r, backends, kind.workflow_inputs)
        inner = engines.get(engine_of.get(r.operation, r.operation))
        if inner is None:
            raise ValueError(f"{r.operation} has no offline engine on this server")
        routed[r.operation] = bind(kind, inner, r, backends, fallback)
    return routed
