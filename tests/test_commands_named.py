"""Every ``pixelmill ...`` command the README, docs/ and the dashboard name exists: each is
parsed out of their code (fenced blocks and inline code of the Markdown, string literals of the
dashboard's scripts) and resolved against the Typer app, group by group (``pixelmill admin
grant`` fails: ``admin`` has no ``grant``). The CLI's own ``admin usage`` needs no option."""

from __future__ import annotations

import re
from pathlib import Path

import typer.main
from typer.testing import CliRunner

from pixelmill.cli import app
from pixelmill.config import Settings
from pixelmill.resources import Resources
from tests.support.settings import TEST_SECRET

ROOT = Path(__file__).resolve().parents[1]

COMMAND = re.compile(r"(?<![\w.=-])(?:\S*/)?pixelmill((?: +[a-z][a-z0-9-]*)+)")
"""``pixelmill`` (or ``.venv/bin/pixelmill``), then its lower-case words: the command path and
perhaps a first argument (the walk below stops at the first leaf command)."""

NOT_THE_CLI = re.compile(r"(alias set|createdb .*|--now|no other|-n|--namespace)\s*$")
"""Text before a ``pixelmill`` that makes it a name, not our command: a MinIO alias, a
database or its owner, systemd units, prose in a layout sketch, a Kubernetes namespace."""


def _markdown_code(text: str) -> list[str]:
    fenced = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
    blocks = fenced.findall(text)
    return blocks + re.findall(r"`([^`\n]+)`", fenced.sub("", text))


def _js_strings(text: str) -> list[str]:
    found = re.findall(r'"([^"\n]*)"|`([^`]*)`|\'([^\'\n]*)\'', text)
    return [s for groups in found for s in groups if s]


def named_commands() -> dict[str, set[str]]:
    """``pixelmill`` command lines named in the README, docs/ and the dashboard -> where."""
    texts: list[tuple[str, str]] = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        texts += [(path.name, t) for t in _markdown_code(path.read_text())]
    for path in sorted((ROOT / "src/pixelmill/web/static").rglob("*.js")):
        texts += [(path.name, s) for s in _js_strings(path.read_text())]
    named: dict[str, set[str]] = {}
    for where, text in texts:
        for line in text.splitlines():
            for m in COMMAND.finditer(line):
                if NOT_THE_CLI.search(line[: m.start()]):
                    continue
                named.setdefault(" ".join(m.group(1).split()), set()).add(where)
    return named


def _subcommands(command: object) -> dict[str, object] | None:
    """The commands of a group (Typer's own click), None for a leaf command."""
    commands = getattr(command, "commands", None)
    return commands if isinstance(commands, dict) else None


def resolve(words: list[str]) -> str | None:
    """Why ``pixelmill WORDS`` is not a command of the Typer app, or None when it is."""
    command: object = typer.main.get_command(app)
    path = ["pixelmill"]
    for word in words:
        commands = _subcommands(command)
        if commands is None:
            return None  # a leaf command: the rest are its arguments
        if word not in commands:
            known = ", ".join(sorted(commands))
            return f"`{' '.join(path)}` has no command `{word}` (it has: {known})"
        command, path = commands[word], [*path, word]
    return None


def test_the_parser_finds_the_commands_and_refuses_a_wrong_one() -> None:
    named = named_commands()
    assert {"serve", "migrate", "worker", "admin create-user", "admin grant-credits"} <= {
        " ".join(k.split()[:2]) if k.startswith("admin") else k.split()[0] for k in named
    }
    assert resolve(["admin", "grant"]) is not None
    assert "grant-credits" in (resolve(["admin", "grant"]) or "")
    assert resolve(["grant-credits"]) is not None
    assert resolve(["admin", "grant-credits", "you"]) is None


def test_every_named_pixelmill_command_exists() -> None:
    wrong = {
        line: (why, sorted(where))
        for line, where in named_commands().items()
        if (why := resolve(line.split())) is not None
    }
    assert wrong == {}


def test_the_readme_lists_every_admin_command() -> None:
    readme = (ROOT / "README.md").read_text()
    admin = _subcommands(_subcommands(typer.main.get_command(app))["admin"])  # type: ignore[index]
    assert admin
    for name in admin:
        assert f"`pixelmill admin {name}" in readme, name


def test_admin_usage_needs_no_option(settings: Settings, resources: Resources) -> None:
    """Without --from and --to: this month so far (it used to ask for them one at a time)."""
    env = {
        "PIXELMILL_ENV": "testing",
        "PIXELMILL_SECRET_KEY": TEST_SECRET,
        "PIXELMILL_DATABASE_URL": settings.resolved_database_url,
        "PIXELMILL_DATA_DIR": str(settings.data_dir),
    }
    result = CliRunner().invoke(app, ["admin", "usage"], env=env)
    assert result.exit_code == 0, result.output
    assert "total" in result.output and "grants and purchases" in result.output
