"""Background replacement: a prompt read into a procedural backdrop, the subject composited in
place over it. The edit engine composes :func:`replace_background` and
:func:`parse_backdrop_prompt` for its "replace the background with ..." step."""

from pixelmill.engines.replace_background.engine import (
    ReplaceBackgroundEngine,
    ReplaceBackgroundParams,
    replace_background,
)
from pixelmill.engines.replace_background.prompt import (
    KNOWN_TERMS,
    BackdropRequest,
    parse_backdrop_prompt,
)

__all__ = [
    "KNOWN_TERMS",
    "BackdropRequest",
    "ReplaceBackgroundEngine",
    "ReplaceBackgroundParams",
    "parse_backdrop_prompt",
    "replace_background",
]
