"""Where the command line finds the server and the key: flags, then the environment
(``PIXELMILL_URL``, ``PIXELMILL_API_KEY``), then a TOML file
(``$PIXELMILL_CONFIG``, else ``$XDG_CONFIG_HOME/pixelmill/config.toml``, else
``~/.config/pixelmill/config.toml``) with ``url`` and ``api_key``, then the default URL."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pixelmill_client._core import DEFAULT_URL


class ConfigError(Exception):
    """The config file exists but cannot be read."""


def default_config_path() -> Path:
    explicit = os.environ.get("PIXELMILL_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "pixelmill" / "config.toml"


def load_file(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    return {k: str(v) for k, v in data.items() if k in ("url", "api_key") and v}


@dataclass(frozen=True)
class Settings:
    url: str
    api_key: str | None
    source: str  # where the key came from, for messages


def resolve(
    url: str | None = None, api_key: str | None = None, config: str | None = None
) -> Settings:
    path = Path(config) if config else default_config_path()
    if config and not path.is_file():
        raise ConfigError(f"no config file at {path}")
    file = load_file(path)
    key, source = None, "nowhere"
    for value, where in (
        (api_key, "--api-key"),
        (os.environ.get("PIXELMILL_API_KEY"), "PIXELMILL_API_KEY"),
        (file.get("api_key"), str(path)),
    ):
        if value:
            key, source = value, where
            break
    base = url or os.environ.get("PIXELMILL_URL") or file.get("url") or DEFAULT_URL
    return Settings(base.rstrip("/"), key, source)
