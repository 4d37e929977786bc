"""Issue #45: the ``Dockerfile`` installs what ``scripts/bootstrap`` installs and runs what
``scripts/serve`` runs, so the image and a checkout cannot drift apart (containers cannot run on
this project's machines; this is how the image stays honest without building it in the suite).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

import typer.main
from typer.core import TyperGroup

from pixelmill.cli import app
from tests.deploy.files import (
    DOCKERFILE,
    ENV_EXAMPLE,
    ROOT,
    dockerignore_excludes,
    load_compose,
    read_dockerfile,
    read_env_file,
)
from tests.deploy.test_setting_names import filled_env

BOOTSTRAP = ROOT / "scripts" / "bootstrap"
SERVE = ROOT / "scripts" / "serve"


@dataclass(frozen=True)
class Install:
    """One ``pip install``: what it installs and whether dependencies are left out."""

    target: str
    """``-r FILE``, the project itself (``.``) or a package name."""
    no_deps: bool


def parse_pip(words: list[str]) -> Install:
    """``pip install`` arguments -> an :class:`Install` (quiet/progress flags ignored; the
    project itself whether editable or not)."""
    no_deps, target = False, None
    rest = iter(words)
    for word in rest:
        if word == "--no-deps":
            no_deps = True
        elif word == "-r":
            target = f"-r {next(rest)}"
        elif word in ("-e", "--editable"):
            target = next(rest)
        elif word in ("-q", "--quiet", "--upgrade", "-U") or word.startswith("--disable-pip"):
            continue
        elif word.startswith("-"):
            raise AssertionError(f"a pip flag this comparison does not know: {word}")
        else:
            target = word
    assert target is not None, words
    return Install("." if target.rstrip("/") in (".", "./") else target, no_deps)


def bootstrap_runtime() -> tuple[list[Install], list[str], list[str]]:
    """What ``scripts/bootstrap`` (without ``--dev``) installs: the pip installs in order, the
    Debian package lists, and the files its install stamp hashes."""
    installs: list[Install] = []
    apt: list[str] = []
    stamped: list[str] = []
    dev_depth = 0
    depth = 0
    in_function = False
    for raw in BOOTSTRAP.read_text().splitlines():
        line = raw.strip()
        if line.startswith("#") or not line:
            continue
        # A function's body (pip_install, apt_install) runs where it is called.
        if re.fullmatch(r"\w+\(\) \{", line):
            in_function = True
        if in_function:
            in_function = line != "}"
            continue
        opens = line.startswith("if ") and not line.endswith("fi")
        if opens:
            depth += 1
            if "--dev" in line and not dev_depth:
                dev_depth = depth
            continue
        if line == "fi" or line.startswith("fi "):
            if dev_depth == depth:
                dev_depth = 0
            depth -= 1
            continue
        inline_dev = line.startswith("if ") and "--dev" in line
        if dev_depth or inline_dev:
            continue
        if line.startswith("apt_install "):
            apt.append(line.split()[1])
        elif line.startswith("want=$(cat "):
            stamped = re.findall(r"[\w./-]+\.(?:txt|toml)", line)
        words = shlex.split(line)
        for i, word in enumerate(words):
            if word == "pip_install":
                installs.append(parse_pip(words[i + 1 :]))
            elif word.endswith("pip") and words[i + 1 : i + 2] == ["install"]:
                installs.append(parse_pip(words[i + 2 :]))
    return installs, apt, stamped


def dockerfile_installs() -> list[Install]:
    """The ``pip install`` commands of the Dockerfile's ``RUN``s, in order."""
    installs: list[Install] = []
    for stage in read_dockerfile().stages:
        for run in stage.all("RUN"):
            for command in re.split(r"&&|;", run):
                words = shlex.split(command)
                for i, word in enumerate(words):
                    if word.endswith("pip") and words[i + 1 : i + 2] == ["install"]:
                        installs.append(parse_pip(words[i + 2 :]))
    return installs


def copied_sources() -> set[str]:
    sources: set[str] = set()
    for stage in read_dockerfile().stages:
        for copy in stage.all("COPY"):
            words = [w for w in copy.split() if not w.startswith("--")]
            if not any(w.startswith("--from") for w in copy.split()):
                sources.update(w.rstrip("/") for w in words[:-1])
    return sources


def test_the_image_pip_installs_what_bootstrap_installs_in_the_same_order() -> None:
    installs, _, _ = bootstrap_runtime()
    assert installs == [
        Install("pip", False),
        Install("-r requirements/runtime.txt", False),
        Install("-r requirements/nodeps.txt", True),
        Install(".", True),
        Install("./clients/python", False),
    ], "scripts/bootstrap changed: update the Dockerfile, then this list"
    # The one install a checkout does not make: the GPU variant's swap of onnxruntime for
    # onnxruntime-gpu, only under `--build-arg ONNXRUNTIME=gpu` (docs/models.md).
    gpu = Install("-r requirements/gpu.txt", False)
    assert [i for i in dockerfile_installs() if i != gpu] == installs
    assert dockerfile_installs().count(gpu) == 1
    assert 'RUN if [ "$ONNXRUNTIME" = "gpu" ]; then' in DOCKERFILE.read_text()


def test_the_image_installs_the_debian_packages_bootstrap_installs() -> None:
    _, apt, _ = bootstrap_runtime()
    assert apt == ["requirements/apt.txt"]
    runtime = read_dockerfile().final
    assert any(f"{apt[0]} " in copy for copy in runtime.all("COPY"))
    assert any("apt-get install" in run for run in runtime.all("RUN"))
    assert "apt-dev.txt" not in DOCKERFILE.read_text()  # the tests' packages stay out


def test_every_file_the_install_reads_reaches_the_build_context() -> None:
    installs, apt, stamped = bootstrap_runtime()
    needed = {i.target.removeprefix("-r ") for i in installs if i.target.startswith("-r ")}
    needed |= {*apt, *stamped, "src", "README.md"}  # pyproject's readme, the package source
    missing = sorted(needed - copied_sources())
    assert missing == [], f"the Dockerfile does not COPY {missing}"
    excluded = sorted(p for p in needed if dockerignore_excludes(p))
    assert excluded == [], f".dockerignore keeps {excluded} out of the build context"
    assert dockerignore_excludes(".venv") and dockerignore_excludes("data/pixelmill.db")
    assert dockerignore_excludes("src/pixelmill/__pycache__/cli.cpython-311.pyc")


def test_the_image_runs_pixelmill_serve_as_scripts_serve_does() -> None:
    serve = [line for line in SERVE.read_text().splitlines() if line.startswith("exec ")]
    assert len(serve) == 1
    words = shlex.split(serve[0])[1:]
    assert words[0].endswith("/pixelmill") and words[1] == "serve"
    runtime = read_dockerfile().final
    entrypoint, cmd = runtime.exec_form("ENTRYPOINT"), runtime.exec_form("CMD")
    assert entrypoint == ["pixelmill"] and cmd[0] == "serve"
    # The default command's options are ones `pixelmill serve` takes (parsed by its own CLI).
    command = typer.main.get_command(app)
    assert isinstance(command, TyperGroup)
    context = command.make_context("pixelmill", list(cmd))
    serve_context = command.commands["serve"].make_context("serve", cmd[1:], parent=context)
    assert serve_context.params["host"] == "0.0.0.0"  # reachable from outside the container
    port = serve_context.params["port"]
    # The healthcheck asks that port's /healthz; EXPOSE names it.
    assert f"http://127.0.0.1:{port}/healthz" in " ".join(runtime.healthcheck())
    assert str(port) in runtime.all("EXPOSE")


def test_the_image_runs_as_a_user_of_its_own_on_a_supported_python() -> None:
    dockerfile = read_dockerfile()
    user = dockerfile.final.last("USER")
    assert user not in ("root", "0") and not user.startswith("0:")
    base = dockerfile.args["BASE_IMAGE"]
    assert all(stage.base == "${BASE_IMAGE}" for stage in dockerfile.stages)
    # scripts/bootstrap refuses Pythons older than 3.11; so must the image's default base.
    match = re.fullmatch(r"python:(\d+)\.(\d+)-slim-\w+", base)
    assert match and (int(match[1]), int(match[2])) >= (3, 11), base
    # compose builds on the same default, and .env.example says so.
    compose = load_compose(filled_env())
    assert compose["services"]["api"]["build"]["args"]["BASE_IMAGE"] == base
    assert read_env_file(ENV_EXAMPLE)["BASE_IMAGE"] == base
    assert dockerfile.final.env()["PIXELMILL_DATA_DIR"] == "/var/lib/pixelmill"
