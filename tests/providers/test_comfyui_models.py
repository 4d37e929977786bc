"""deploy/comfyui/fetch-models (the compose ``comfyui-models`` one-shot) against a real HTTP
server on 127.0.0.1: a good file lands under its name with its digest checked, a wrong one is
refused with both digests named and nothing left behind, an interrupted one resumes with a
Range request, a file already in place is verified rather than fetched again, and an entry
without a pinned digest is never downloaded (a warning, or a failure with ``--strict``)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import ClassVar

import pytest

from tests.support.servers import serve_handler

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "comfyui" / "fetch-models"
GOOD = bytes(range(256)) * 4099  # about 1 MB, more than one read of the script's
WRONG = b"not the model" * 1000


class Files(BaseHTTPRequestHandler):
    files: ClassVar[dict[str, bytes]] = {}
    ranges: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        data = self.files.get(self.path.lstrip("/"))
        if data is None:
            self.send_error(404)
            return
        wanted = self.headers.get("Range")
        start = 0
        if wanted:
            self.ranges.append(wanted)
            start = int(wanted.removeprefix("bytes=").split("-")[0])
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        self.wfile.write(data[start:])

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def mirror() -> Iterator[str]:
    Files.files = {"good.safetensors": GOOD, "wrong.pth": WRONG}
    Files.ranges = []
    with serve_handler(Files) as base:
        yield base


def manifest(tmp_path: Path) -> Path:
    entries = [
        {
            "file": "good.safetensors",
            "folder": "checkpoints",
            "url": "https://example.invalid/good.safetensors",
            "sha256": hashlib.sha256(GOOD).hexdigest(),
        },
        {
            "file": "wrong.pth",
            "folder": "upscale_models",
            "url": "https://example.invalid/wrong.pth",
            "sha256": hashlib.sha256(b"the real weights").hexdigest(),
        },
        {
            "file": "unpinned.safetensors",
            "folder": "vae",
            "url": "https://example.invalid/unpinned.safetensors",
            "sha256": None,
        },
    ]
    path = tmp_path / "models.json"
    path.write_text(json.dumps({"models": entries}))
    return path


def fetch(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(SCRIPT), "--models", str(tmp_path / "models")]
    command += ["--manifest", str(manifest(tmp_path)), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_a_good_file_lands_after_its_digest_is_checked(tmp_path: Path, mirror: str) -> None:
    run = fetch(tmp_path, "--mirror", mirror, "good.safetensors")
    assert run.returncode == 0, run.stderr
    target = tmp_path / "models" / "checkpoints" / "good.safetensors"
    assert target.read_bytes() == GOOD
    assert not target.with_name("good.safetensors.part").exists()
    assert f"sha256 {hashlib.sha256(GOOD).hexdigest()} (ok)" in run.stdout
    again = fetch(tmp_path, "--mirror", mirror, "good.safetensors")
    assert again.returncode == 0 and "present" in again.stdout  # verified, not fetched again


def test_a_wrong_file_is_refused_and_nothing_is_left(tmp_path: Path, mirror: str) -> None:
    run = fetch(tmp_path, "--mirror", mirror, "wrong.pth")
    assert run.returncode == 1
    got, want = hashlib.sha256(WRONG).hexdigest(), hashlib.sha256(b"the real weights").hexdigest()
    assert f"got {got}, expected {want}" in run.stderr
    assert list((tmp_path / "models" / "upscale_models").iterdir()) == []


def test_an_interrupted_download_resumes(tmp_path: Path, mirror: str) -> None:
    folder = tmp_path / "models" / "checkpoints"
    folder.mkdir(parents=True)
    (folder / "good.safetensors.part").write_bytes(GOOD[:300_000])  # what a cut left
    run = fetch(tmp_path, "--mirror", mirror, "good.safetensors")
    assert run.returncode == 0, run.stderr
    assert Files.ranges == ["bytes=300000-"]
    assert (folder / "good.safetensors").read_bytes() == GOOD


def test_an_unpinned_file_is_never_downloaded(tmp_path: Path, mirror: str) -> None:
    Files.files["unpinned.safetensors"] = b"anything"
    run = fetch(tmp_path, "--mirror", mirror, "unpinned.safetensors")
    assert run.returncode == 0  # a warning: the stack starts, those workflows wait for the file
    assert "no sha256 is pinned" in run.stdout
    assert fetch(tmp_path, "--strict", "unpinned.safetensors").returncode == 1
    assert not (tmp_path / "models" / "vae" / "unpinned.safetensors").exists()
    placed = tmp_path / "models" / "vae" / "unpinned.safetensors"
    placed.parent.mkdir(parents=True, exist_ok=True)
    placed.write_bytes(b"the operator's copy")
    assert fetch(tmp_path, "--check", "unpinned.safetensors").returncode == 0


def test_check_only_downloads_nothing_and_unknown_names_are_refused(tmp_path: Path) -> None:
    run = fetch(tmp_path, "--check", "good.safetensors")
    assert run.returncode == 1 and "MISSING" in run.stderr
    assert not (tmp_path / "models" / "checkpoints").exists()
    assert fetch(tmp_path, "nosuch.ckpt").returncode == 2


def test_the_shipped_manifest_loads_and_names_only_known_folders() -> None:
    entries = json.loads((SCRIPT.parent / "models.json").read_text())["models"]
    folders = {"checkpoints", "diffusion_models", "text_encoders", "vae", "upscale_models"}
    assert {e["folder"] for e in entries} <= folders
