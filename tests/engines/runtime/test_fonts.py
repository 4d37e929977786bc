"""The font loader reads its extra folder from the settings (``PIXELMILL_FONT_DIR``, handed to
the registry), not from the environment behind the settings' back."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import ImageFont

from pixelmill.config import Settings
from pixelmill.engines.registry import build_engines
from pixelmill.engines.runtime.fonts import font_or_builtin, font_path, use_font_dir


@pytest.fixture
def restore_fonts() -> Iterator[None]:
    yield
    use_font_dir(None)


def test_the_settings_font_dir_is_searched_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, restore_fonts: None
) -> None:
    installed = Path(font_path("serif"))
    shutil.copy(font_path("sans-bold"), tmp_path / installed.name)  # a different face, same name
    monkeypatch.setenv("PIXELMILL_FONT_DIR", str(tmp_path))
    settings = Settings(data_dir=tmp_path / "data")
    assert settings.font_dir == tmp_path
    build_engines(settings.models_dir, settings.font_dir)
    assert font_path("serif") == str(tmp_path / installed.name)
    face = font_or_builtin("serif", 20)  # its cache follows too
    assert isinstance(face, ImageFont.FreeTypeFont) and face.path == str(tmp_path / installed.name)
    use_font_dir(None)
    assert font_path("serif") == str(installed)
