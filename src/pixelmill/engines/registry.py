"""The engine registry: engine name -> a shared instance. Engines load their models lazily on
first use (``load()`` is idempotent and locked), so building the registry is cheap."""

from __future__ import annotations

from pixelmill.engines.analyze.engine import AnalyzeEngine
from pixelmill.engines.background.engine import BackgroundRemovalEngine, MakeTransparentEngine
from pixelmill.engines.base import Engine
from pixelmill.engines.colorize.engine import ColorizeEngine
from pixelmill.engines.convert.engine import ConvertEngine
from pixelmill.engines.deblur.engine import UnblurEngine
from pixelmill.engines.edit.engine import EditEngine
from pixelmill.engines.enhance.engine import EnhanceEngine
from pixelmill.engines.prompt.engine import ImageToPromptEngine
from pixelmill.engines.replace_background.engine import ReplaceBackgroundEngine
from pixelmill.engines.scenes.engine import ScenesEngine
from pixelmill.engines.style.engine import StyleTransferEngine
from pixelmill.engines.text_removal.engine import TextRemovalEngine
from pixelmill.engines.upscale.engine import UpscaleEngine


def build_engines() -> dict[str, Engine]:
    engines: list[Engine] = [
        BackgroundRemovalEngine(),
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
    ]
    return {e.name: e for e in engines}
