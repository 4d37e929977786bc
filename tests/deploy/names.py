"""Which ``PIXELMILL_*`` names are real, derived from the code (never a hand list): the fields
of :class:`~pixelmill.config.Settings`, the ``PIXELMILL_ROUTE_<OPERATION>`` variables its
validator reads (for the operations the engine registry can route), and the variables other code
reads from the environment itself (the Python client, the test suite, a few engine paths)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from pixelmill.config import Settings
from tests.deploy.files import ROOT

PREFIX = "PIXELMILL_"
ROUTE_PREFIX = "PIXELMILL_ROUTE_"
# A name as written in prose: PIXELMILL_SECRET_KEY, and the patterns PIXELMILL_ROUTE_<OPERATION>,
# PIXELMILL_ROUTE_* and PIXELMILL_* (the name part up to the placeholder).
NAME = re.compile(r"PIXELMILL_[A-Z0-9_]*")
_ENV_READ = re.compile(
    r"(?:environ(?:\.get)?\s*[\[(]|getenv\s*\()\s*[\"'](?P<name>PIXELMILL_[A-Z0-9_]+)[\"']"
)


def settings_names() -> set[str]:
    """``PIXELMILL_<FIELD>`` for every field of the settings."""
    return {PREFIX + name.upper() for name in Settings.model_fields}


@cache
def routable_operations() -> frozenset[str]:
    from pixelmill.engines.registry import HOSTED

    return frozenset(HOSTED)


def settings_read_route_variables() -> bool:
    """Whether the settings really take ``PIXELMILL_ROUTE_<OPERATION>`` from the environment
    (the validator, run on a variable set for the purpose)."""
    name = ROUTE_PREFIX + "ANALYZE"
    saved = os.environ.get(name)
    os.environ[name] = "openai:probe-model"
    try:
        return Settings(env="development").routes.get("analyze") == "openai:probe-model"
    finally:
        if saved is None:
            del os.environ[name]
        else:
            os.environ[name] = saved


def is_setting(name: str) -> bool:
    """A variable the server's settings read: a field, or a route of a routable operation (a
    bare ``PIXELMILL_ROUTE_`` is the pattern ``PIXELMILL_ROUTE_<OPERATION>``)."""
    if name in settings_names():
        return True
    if name.startswith(ROUTE_PREFIX):
        operation = name.removeprefix(ROUTE_PREFIX).lower()
        known = operation == "" or operation in routable_operations()
        return known and settings_read_route_variables()
    return False


def read_by_code(folders: Iterable[Path]) -> dict[str, Path]:
    """Names the Python code under ``folders`` reads from the environment itself
    (``os.environ[...]``, ``os.environ.get(...)``, ``os.getenv(...)``) -> the first file."""
    found: dict[str, Path] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            for match in _ENV_READ.finditer(path.read_text()):
                found.setdefault(match["name"], path.relative_to(ROOT))
    return found


def names_in(text: str) -> set[str]:
    """Every ``PIXELMILL_*`` name written in ``text``, the bare prefix left out."""
    return {name for name in NAME.findall(text) if name != PREFIX}
