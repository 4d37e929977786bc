"""Reading the deployment files as their tools do: ``deploy/compose.yaml`` with Compose's
variable interpolation from ``deploy/.env``, env files, the ``Dockerfile``'s instructions and
``.dockerignore``'s patterns. Only what the project's own files use is implemented, and anything
else is refused loudly, so a construct this reader does not know cannot pass unnoticed."""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "compose.yaml"
ENV_EXAMPLE = DEPLOY / ".env.example"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"

_VARIABLE = re.compile(
    r"\$\$"
    r"|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?+])(?P<arg>[^}]*))?\}"
    r"|\$(?P<bare>[A-Za-z_][A-Za-z0-9_]*)"
    r"|\$\{"
)


class MissingVariable(ValueError):
    """A ``${NAME:?message}`` whose variable is unset (Compose refuses to start)."""


def read_env_file(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` lines (comments and blank lines skipped; no quoting is used in ours)."""
    values: dict[str, str] = {}
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise ValueError(f"{path.name}:{number}: not KEY=VALUE: {raw!r}")
        if value[:1] in ("'", '"'):
            raise ValueError(f"{path.name}:{number}: quoted values are not read here")
        values[key] = value
    return values


def interpolate(text: str, env: dict[str, str]) -> str:
    """Compose's interpolation: ``$$``, ``$NAME``, ``${NAME}``, ``${NAME:-default}``,
    ``${NAME-default}``, ``${NAME:?error}``, ``${NAME?error}``, ``${NAME:+alt}``,
    ``${NAME+alt}``."""

    def one(match: re.Match[str]) -> str:
        whole = match.group(0)
        if whole == "$$":
            return "$"
        if whole == "${":
            raise ValueError(f"an interpolation this reader does not know in {text!r}")
        name = match["name"] or match["bare"]
        op, arg = match["op"], match["arg"] or ""
        value = env.get(name)
        unset_or_empty = not value
        if op in (":-", "-"):
            missing = unset_or_empty if op == ":-" else value is None
            return arg if missing else str(value)
        if op in (":?", "?"):
            missing = unset_or_empty if op == ":?" else value is None
            if missing:
                raise MissingVariable(f"{name}: {arg}")
            return str(value)
        if op in (":+", "+"):
            present = not unset_or_empty if op == ":+" else value is not None
            return arg if present else ""
        return value or ""

    return _VARIABLE.sub(one, text)


def referenced_variables(text: str) -> set[str]:
    """The names a Compose file interpolates."""
    return {m["name"] or m["bare"] for m in _VARIABLE.finditer(text) if m["name"] or m["bare"]}


def _interpolate_tree(node: Any, env: dict[str, str]) -> Any:
    if isinstance(node, str):
        return interpolate(node, env)
    if isinstance(node, dict):
        return {key: _interpolate_tree(value, env) for key, value in node.items()}
    if isinstance(node, list):
        return [_interpolate_tree(value, env) for value in node]
    return node


def load_compose(env: dict[str, str]) -> dict[str, Any]:
    """``deploy/compose.yaml`` as Compose sees it with ``env`` as its ``.env``: YAML anchors
    and merge keys resolved, then every value interpolated."""
    document = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(document, dict)
    tree: dict[str, Any] = _interpolate_tree(document, env)
    return tree


def service_environment(service: dict[str, Any]) -> dict[str, str]:
    """A service's ``environment`` (mapping or ``KEY=VALUE`` list form) as strings."""
    environment = service.get("environment") or {}
    if isinstance(environment, list):
        pairs = (item.partition("=") for item in environment)
        return {key: value for key, _, value in pairs}
    return {str(key): "" if value is None else str(value) for key, value in environment.items()}


@dataclass
class Stage:
    """One ``FROM`` stage of the Dockerfile: its instructions, continuation lines joined."""

    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for kw, args in self.instructions if kw == keyword]

    def last(self, keyword: str) -> str:
        found = self.all(keyword)
        assert found, f"no {keyword} in the stage FROM {self.base}"
        return found[-1]

    def env(self) -> dict[str, str]:
        """The stage's ``ENV KEY=VALUE ...`` pairs."""
        values: dict[str, str] = {}
        for args in self.all("ENV"):
            for word in shlex.split(args):
                key, sep, value = word.partition("=")
                assert sep, f"ENV in the KEY=VALUE form only: {args!r}"
                values[key] = value
        return values

    def exec_form(self, keyword: str) -> list[str]:
        """``ENTRYPOINT``/``CMD`` in the exec (JSON) form."""
        value = json.loads(self.last(keyword))
        assert isinstance(value, list) and all(isinstance(v, str) for v in value)
        return value

    def healthcheck(self) -> list[str]:
        """The exec form of ``HEALTHCHECK [options] CMD [...]``."""
        args = self.last("HEALTHCHECK")
        _, sep, command = args.partition("CMD ")
        assert sep, f"HEALTHCHECK without CMD: {args!r}"
        value = json.loads(command)
        assert isinstance(value, list)
        return [str(v) for v in value]


@dataclass
class Dockerfile:
    args: dict[str, str]
    """The global ``ARG``s before the first ``FROM``, with their defaults."""
    stages: list[Stage]

    @property
    def final(self) -> Stage:
        return self.stages[-1]


def read_dockerfile(path: Path = DOCKERFILE) -> Dockerfile:
    """The Dockerfile's instructions (comments dropped, ``\\`` continuations joined)."""
    logical: list[str] = []
    pending = ""
    for raw in path.read_text().splitlines():
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and not pending):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        logical.append(pending + stripped)
        pending = ""
    assert not pending, "a continuation runs off the end of the Dockerfile"
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in logical:
        keyword, _, rest = line.partition(" ")
        keyword, rest = keyword.upper(), rest.strip()
        if keyword == "FROM":
            words = rest.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append(Stage(words[0], name))
        elif not stages:
            assert keyword == "ARG", f"only ARG may come before FROM: {line!r}"
            key, _, default = rest.partition("=")
            args[key] = default
        else:
            stages[-1].instructions.append((keyword, rest))
    return Dockerfile(args, stages)


def dockerignore_excludes(relative: str, path: Path = DOCKERIGNORE) -> bool:
    """Whether ``.dockerignore`` keeps ``relative`` out of the build context: the last pattern
    matching the path or one of its parent folders decides, ``!`` re-includes."""
    patterns = [
        line.strip()
        for line in path.read_text().splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    parts = relative.strip("/").split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    excluded = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        body = pattern.lstrip("!").strip("/")
        regex = _dockerignore_regex(body)
        if any(regex.fullmatch(candidate) for candidate in candidates):
            excluded = not negate
    return excluded


def _dockerignore_regex(pattern: str) -> re.Pattern[str]:
    if pattern.startswith("**/"):
        inner = fnmatch.translate(pattern[3:]).removesuffix(r"\Z")
        return re.compile(rf"(?:.*/)?{inner}")
    return re.compile(fnmatch.translate(pattern).replace(".*", "[^/]*").removesuffix(r"\Z"))
