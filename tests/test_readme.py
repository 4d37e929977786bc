"""The README's shell examples, run as written against a fresh server, so they cannot rot.

How the examples run, and the only things changed in them:

- every ```` ```sh ```` block of README.md runs, in the README's order, in one ``bash`` with
  ``set -euo pipefail`` (state such as ``$KEY`` carries over, as in one terminal), except a block
  right after an HTML comment ``<!-- readme-test: skip (why) -->``: those start long-running
  processes (the server itself, the test suite, a Celery worker);
- ``http://127.0.0.1:8000`` becomes the base URL of the server this test starts, with the
  README's own command (``pixelmill serve --host 127.0.0.1 --port PORT``, what ``scripts/serve``
  runs after installing) on a free port, with a fresh data directory (``PIXELMILL_DATA_DIR``);
- ``curl`` is a function adding ``--fail-with-body``, so an HTTP error stops the run and shows
  its body;
- the working directory is a scratch folder holding ``photo.jpg`` (a real photo of about 2.4 MB),
  ``bottle.png`` (a product photo) and a link ``.venv`` to the project's virtual environment, so
  ``.venv/bin/pixelmill admin ...`` reaches the same data as the server.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
import pytest
from PIL import Image

from tests.support.images import photo_rgb, product_rgb
from tests.support.services import IN_CI

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
README_BASE_URL = "http://127.0.0.1:8000"
SKIP_MARK = re.compile(r"<!--\s*readme-test:\s*skip\s*\((?P<why>[^)]+)\)\s*-->")
PHOTO_SIZE = (2000, 1500)
MARKER = "--- README.md line "
RUNTIME_STAMP_FILES = ("requirements/runtime.txt", "requirements/nodeps.txt", "pyproject.toml")
"""What ``scripts/bootstrap`` hashes to tell whether the runtime packages are current."""


@dataclass
class Block:
    line: int
    code: str
    skip_reason: str | None


def readme_blocks(text: str) -> list[Block]:
    """The ``sh`` fenced blocks of ``text``, each with the skip reason of a comment just
    before it."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            start = i
            body: list[str] = []
            i += 1
            while lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            before = next((ln for ln in reversed(lines[:start]) if ln.strip()), "")
            mark = SKIP_MARK.search(before)
            blocks.append(Block(start + 1, "\n".join(body), mark["why"] if mark else None))
        i += 1
    return blocks


def make_photo(path: Path) -> None:
    """A real photo (skimage's coffee) at 3 MP with sensor-like noise: a JPEG of about 2.4 MB."""
    w, h = PHOTO_SIZE
    rng = np.random.default_rng(7)
    pixels = photo_rgb(w, h).astype(np.float32) + rng.normal(0, 6, (h, w, 3))
    image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
    image.save(path, "JPEG", quality=95, subsampling=0)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def venv() -> Path:
    path = ROOT / ".venv"
    if not (path / "bin" / "pixelmill").exists():
        message = f"{path} has no pixelmill command; run scripts/bootstrap"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def server_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a fresh embedded default: no PIXELMILL_* of the caller, own data."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIXELMILL_")}
    env["PIXELMILL_DATA_DIR"] = str(tmp_path / "data")
    return env


@pytest.fixture
def server(venv: Path, server_env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """``pixelmill serve --host 127.0.0.1 --port PORT`` in its own process; yields the base URL."""
    port = free_port()
    log = (tmp_path / "server.log").open("wb")
    proc = subprocess.Popen(
        [str(venv / "bin" / "pixelmill"), "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=server_env,
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, (tmp_path / "server.log").read_text()
            try:
                if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the server did not become ready in 90 s"
            time.sleep(0.2)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def test_readme_blocks_are_found_and_skips_are_explained() -> None:
    blocks = readme_blocks(README.read_text())
    skipped = [b for b in blocks if b.skip_reason]
    assert [b.code.splitlines()[0] for b in skipped] == [
        "scripts/serve",
        "scripts/test",
        "export PIXELMILL_QUEUE=celery PIXELMILL_REDIS_URL=redis://127.0.0.1:6379/0",
    ]
    run = [b for b in blocks if not b.skip_reason]
    assert len(run) >= 5
    assert all(README_BASE_URL in b.code or "pixelmill admin" in b.code for b in run)


@pytest.mark.slow
def test_readme_examples_run_as_written(
    server: str, server_env: dict[str, str], venv: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / ".venv").symlink_to(venv)
    make_photo(work / "photo.jpg")
    photo_bytes = (work / "photo.jpg").stat().st_size
    assert 2_000_000 < photo_bytes < 5_000_000, photo_bytes  # a few MB, within the free plan
    Image.fromarray(product_rgb(640, 480)).save(work / "bottle.png")

    # The examples run on a fresh free-plan account (10 requests a minute). A person typing them
    # takes longer than a minute; run back to back they may not, so curl waits out a 429 as its
    # Retry-After says (--retry), as the Python client and the CLI do by themselves.
    script = [
        "set -euo pipefail",
        "curl() { command curl --fail-with-body --show-error --retry 4 --retry-max-time 150"
        ' "$@"; }',
    ]
    for block in readme_blocks(README.read_text()):
        if block.skip_reason is None:
            # a marker on both streams: curl's answers end without a newline
            script.append(f"printf '\\n{MARKER}%s\\n' {block.line} | tee /dev/stderr")
            script.append(block.code.replace(README_BASE_URL, server))
    proc = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=work,
        env=server_env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"

    # What the examples printed and left behind is what they promise.
    printed = {
        int(line): out.strip()
        for line, out in re.findall(
            rf"^{MARKER}(\d+)\n(.*?)(?=^{MARKER}|\Z)", proc.stdout, re.M | re.S
        )
    }
    first, last = min(printed), max(printed)
    assert re.fullmatch(r"pk_live_\S+", printed[first]), printed[first]
    cutout = Image.open(work / "cutout.png")
    assert cutout.format == "PNG" and cutout.mode == "RGBA" and cutout.size == PHOTO_SIZE
    alpha = np.asarray(cutout)[..., 3]
    assert 0.05 < (alpha > 128).mean() < 0.95  # a subject kept, a background removed
    v1 = json.loads((work / "v1-upscaled.json").read_text())
    upscaled = Image.open(io.BytesIO(base64.b64decode(v1["result"])))
    assert upscaled.size == (PHOTO_SIZE[0] * 2, PHOTO_SIZE[1] * 2)
    assert json.loads((work / "v1-cutout.json").read_text())["success"] is True
    job = json.loads(printed[last])
    assert job["status"] == "completed" and len(job["results"]) == 3, job

    # The Python example saved the upscaled photo under the extension of its format.
    assert Image.open(work / "photo-2x.jpeg").format == "JPEG"

    # The start banner's shell command runs as printed, from where the server was started.
    banner = re.search(r"Or from the shell \(in this directory\):  (\S+(?: -m pixelmill)?) admin",
                       (tmp_path / "server.log").read_text())  # fmt: skip
    assert banner, (tmp_path / "server.log").read_text()[:2000]
    made = subprocess.run(
        f"{banner[1]} admin create-user banner@example.com",
        shell=True, cwd=tmp_path, env=server_env, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert made.returncode == 0 and "pk_live_" in made.stdout, made.stdout + made.stderr

    # The command line's lines: the account, a cut-out saved in cutouts/, two scenes in scenes/.
    (cli_block,) = [b for b in readme_blocks(README.read_text()) if "client account" in b.code]
    assert "credits" in printed[cli_block.line].lower(), printed[cli_block.line]
    cutouts = list((work / "cutouts").iterdir())
    assert len(cutouts) == 1 and Image.open(cutouts[0]).mode == "RGBA", cutouts
    scenes = sorted((work / "scenes").iterdir())
    assert len(scenes) == 2 and all(Image.open(s).size[0] > 0 for s in scenes), scenes


@pytest.mark.slow
def test_bootstrap_without_dev_installs_the_client(venv: Path, tmp_path: Path) -> None:
    """The README's first command (``scripts/serve`` runs ``scripts/bootstrap`` without
    ``--dev``) leaves ``.venv/bin/pixelmill-client``: ``scripts/bootstrap`` from a clone of this
    tree, into a fresh virtual environment that sees the project's installed packages (a
    ``.pth`` line) and whose runtime stamp is current, so only the steps after the runtime
    packages run, as on a second start."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
    for path in ("scripts/bootstrap", "clients/python/pyproject.toml"):  # uncommitted edits too
        (clone / path).write_bytes((ROOT / path).read_bytes())
    fresh = clone / ".venv"
    subprocess.run(["python3", "-m", "venv", str(fresh)], check=True, timeout=120)
    site = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(next((fresh / "lib").glob("python3*/site-packages"))) / "project.pth").write_text(site)
    stamped = b"".join((clone / f).read_bytes() for f in RUNTIME_STAMP_FILES)
    (fresh / ".pixelmill-installed").write_text(hashlib.sha256(stamped).hexdigest() + "\n")
    proc = subprocess.run(
        ["scripts/bootstrap"], cwd=clone, capture_output=True, text=True, timeout=600, check=False
    )
    said = proc.stdout + proc.stderr
    if proc.returncode != 0 and not IN_CI and re.search(r"(?i)network|connection|index", said):
        pytest.skip(f"no package index reachable: {proc.stderr[-500:]}")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "runtime packages up to date" in proc.stdout
    assert "installing pixelmill-client" in proc.stdout
    help_text = subprocess.run(
        [str(fresh / "bin" / "pixelmill-client"), "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert "remove-background" in help_text and "generate" in help_text
    # A second start finds it installed and says nothing about it.
    again = subprocess.run(
        ["scripts/bootstrap"], cwd=clone, capture_output=True, text=True, timeout=300, check=True
    )
    assert "pixelmill-client" not in again.stdout
