"""The engine registry: engine name -> a shared instance. Engines load their models lazily on
first use (``load()`` is idempotent and locked), so building the registry is cheap."""

from __future__ import annotations

from pathlib import Path

from pixelmill.engines.ads import AdEngine
from pixelmill.engines.analyze import AnalyzeEngine
from pixelmill.engines.avatar import GuidedAvatarEngine, ReferenceAvatarEngine
from pixelmill.engines.background import BackgroundRemovalEngine, MakeTransparentEngine
from pixelmill.engines.base import Engine
from pixelmill.engines.colorize import ColorizeEngine
from pixelmill.engines.convert import ConvertEngine
from pixelmill.engines.deblur import UnblurEngine
from pixelmill.engines.edit import EditEngine
from pixelmill.engines.enhance import EnhanceEngine
from pixelmill.engines.product_photo import ProductPhotoEngine
from pixelmill.engines.product_text import ProductTextEngine
from pixelmill.engines.prompt import ImageToPromptEngine
from pixelmill.engines.replace_background import ReplaceBackgroundEngine
from pixelmill.engines.scenes import ScenesEngine
from pixelmill.engines.silo import SiloEngine
from pixelmill.engines.style import StyleTransferEngine
from pixelmill.engines.text_removal import TextRemovalEngine
from pixelmill.engines.tryon import TryOnEngine
from pixelmill.engines.upscale import UpscaleEngine


def build_engines(models_dir: Path | None = None) -> dict[str, Engine]:
    """Every engine; ``models_dir`` (``PIXELMILL_MODELS_DIR``) may hold stronger rembg-format
    background-removal models."""
    engines: list[Engine] = [
        BackgroundRemovalEngine(models_dir),
        MakeTransparentEngine(),
        UpscaleEngine(),
        TextRemovalEngine(),
        ConvertEngine(),
        EnhanceEngine(),
        UnblurEngine(),
        ColorizeEngine(),
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
    ]
    return {e.name: e for e in engines}
