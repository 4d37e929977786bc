"""The one font loader: the installed DejaVu faces by role, for everything an engine draws text
with (ad layouts, burned-in video subtitles).

The faces are DejaVu, from Debian's ``fonts-dejavu-core`` and ``fonts-dejavu-extra``
(``requirements/apt.txt``, installed by ``scripts/bootstrap``); ``PIXELMILL_FONT_DIR`` (a
setting the registry hands to :func:`use_font_dir`) names one more folder, searched first.
Each role lists fallbacks, so a machine with only the core package still renders (with a less
condensed headline face).
"""

from __future__ import annotations

import functools
from pathlib import Path

from PIL import ImageFont

from pixelmill.engines.base import EngineError

FontType = ImageFont.FreeTypeFont | ImageFont.ImageFont

FONT_DIRS = (
    Path("/usr/share/fonts/truetype/dejavu"),
    Path("/usr/share/fonts/dejavu"),
    Path("/usr/local/share/fonts"),
)

FACES: dict[str, tuple[str, ...]] = {
    "sans": ("DejaVuSans.ttf",),
    "sans-bold": ("DejaVuSans-Bold.ttf",),
    "sans-light": ("DejaVuSans-ExtraLight.ttf", "DejaVuSans.ttf"),
    "condensed-bold": ("DejaVuSansCondensed-Bold.ttf", "DejaVuSans-Bold.ttf"),
    "condensed": ("DejaVuSansCondensed.ttf", "DejaVuSans.ttf"),
    "serif": ("DejaVuSerif.ttf",),
    "serif-bold": ("DejaVuSerif-Bold.ttf", "DejaVuSerif.ttf"),
    "serif-italic": (
        "DejaVuSerif-Italic.ttf",
        "DejaVuSerifCondensed-Italic.ttf",
        "DejaVuSerif.ttf",
    ),
}
"""Role -> font files, first found wins."""


_EXTRA_DIRS: list[Path] = []


def use_font_dir(folder: Path | None) -> None:
    """Search ``folder`` first from now on (``None``: only the installed faces)."""
    _EXTRA_DIRS[:] = [folder] if folder is not None else []
    font_path.cache_clear()
    font_or_builtin.cache_clear()


@functools.cache
def font_path(face: str) -> str:
    """The file of ``face``; :class:`EngineError` when none of its fonts is installed."""
    dirs = (*_EXTRA_DIRS, *FONT_DIRS)
    for name in FACES[face]:
        for folder in dirs:
            candidate = folder / name
            if candidate.is_file():
                return str(candidate)
    raise EngineError(
        f"the {face} font ({', '.join(FACES[face])}) is not installed: run scripts/bootstrap "
        "(Debian packages fonts-dejavu-core, fonts-dejavu-extra)"
    )


@functools.lru_cache(maxsize=256)
def font(face: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(font_path(face), size)


def check_fonts() -> None:
    """Every role resolves to an installed file (raises :class:`EngineError` otherwise)."""
    for face in FACES:
        font_path(face)


@functools.lru_cache(maxsize=64)
def font_or_builtin(face: str, size: int) -> FontType:
    """``face`` at ``size``, or PIL's built-in font when none of its files is installed (for
    drawing that must not fail, such as subtitles)."""
    try:
        return font(face, size)
    except EngineError:
        return ImageFont.load_default(size)
