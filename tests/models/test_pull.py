"""``pixelmill models pull`` against a real HTTP server on 127.0.0.1 that honours ``Range``: a
good file arrives and is checked, a wrong one is refused and leaves nothing, an interrupted one
is resumed from where it stopped, and a mirror is fetched as ``MIRROR/<file>``."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pixelmill.cli import app as cli
from pixelmill.models.catalogue import CatalogueEntry, by_name
from pixelmill.models.pull import DigestMismatch, PullError, part_path, pull
from tests.models.tiny import REMBG_U2NETP

PAYLOAD = bytes(range(256)) * 4096  # 1 MiB, no two neighbouring blocks alike


class Files(ThreadingHTTPServer):
    """Serves ``files`` by path; ``cut[path] = n`` drops the connection after n bytes, once."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.files: dict[str, bytes] = {}
        self.cut: dict[str, int] = {}
        self.ranges: list[str | None] = []
        self.paths: list[str] = []

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: Files

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        body = self.server.files.get(self.path)
        self.server.ranges.append(self.headers.get("Range"))
        self.server.paths.append(self.path)
        if body is None:
            self.send_error(404)
            return
        start = 0
        if rng := self.headers.get("Range"):
            start = int(rng.removeprefix("bytes=").split("-")[0])
            if start >= len(body):
                self.send_response(416)
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        cut = self.server.cut.pop(self.path, None)
        if cut is not None:
            self.wfile.write(body[start:cut])
            self.wfile.flush()
            self.connection.shutdown(2)  # the connection drops mid-file
            return
        self.wfile.write(body[start:])


@pytest.fixture
def server() -> Iterator[Files]:
    files = Files()
    thread = threading.Thread(target=files.serve_forever, daemon=True)
    thread.start()
    yield files
    files.shutdown()
    files.server_close()


def entry_for(server: Files, body: bytes, *, size: bool = True) -> CatalogueEntry:
    """The catalogue's lama entry pointed at the local server and at ``body``'s digests."""
    lama = by_name("lama")
    assert lama is not None
    server.files["/upstream/lama_fp32.onnx"] = body
    return replace(
        lama,
        url=server.base + "/upstream/lama_fp32.onnx",
        sha256=hashlib.sha256(PAYLOAD).hexdigest(),
        md5=hashlib.md5(PAYLOAD).hexdigest(),
        size=len(PAYLOAD) if size else None,
    )


def test_a_good_file_arrives_checked(server: Files, tmp_path: Path) -> None:
    entry = entry_for(server, PAYLOAD)
    seen: list[tuple[int, int | None]] = []
    path = pull(entry, tmp_path, progress=lambda done, total: seen.append((done, total)))
    assert path == tmp_path / "lama_fp32.onnx" and path.read_bytes() == PAYLOAD
    assert seen[-1] == (len(PAYLOAD), len(PAYLOAD))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lama_fp32.onnx"]
    pull(entry, tmp_path)  # already there and right: nothing fetched
    assert len(server.ranges) == 1


def test_a_wrong_file_is_refused_and_nothing_is_left(server: Files, tmp_path: Path) -> None:
    tampered = bytearray(PAYLOAD)
    tampered[1000] ^= 1
    entry = entry_for(server, bytes(tampered))
    with pytest.raises(DigestMismatch) as refused:
        pull(entry, tmp_path)
    actual = hashlib.sha256(tampered).hexdigest()
    assert refused.value.expected == entry.sha256 and refused.value.actual == actual
    assert entry.sha256 in str(refused.value) and actual in str(refused.value)
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_download_resumes_where_it_stopped(server: Files, tmp_path: Path) -> None:
    entry = entry_for(server, PAYLOAD, size=False)
    server.cut["/upstream/lama_fp32.onnx"] = 300_000
    with pytest.raises(PullError, match="resume"):
        pull(entry, tmp_path)
    part = part_path(entry, tmp_path)
    assert part.stat().st_size == 300_000
    assert not (tmp_path / "lama_fp32.onnx").exists()  # never visible unchecked
    path = pull(entry, tmp_path)
    assert server.ranges == [None, "bytes=300000-"]
    assert path.read_bytes() == PAYLOAD and not part.exists()


def test_the_command_pulls_from_a_mirror_and_names_both_digests(
    server: Files, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    u2netp = by_name("u2netp")
    assert u2netp is not None
    real = REMBG_U2NETP  # rembg's own copy
    server.files["/mirror/u2netp.onnx"] = real.read_bytes()
    server.files["/mirror/lama_fp32.onnx"] = b"not lama"
    models = tmp_path / "models"
    env = {
        "PIXELMILL_MODELS_DIR": str(models),
        "PIXELMILL_MODELS_MIRROR": server.base + "/mirror/",
        "PIXELMILL_DATA_DIR": str(tmp_path / "d"),
    }
    out = CliRunner().invoke(cli, ["models", "pull", "u2netp"], env=env)
    assert out.exit_code == 0, out.output
    assert f"sha256 {u2netp.sha256} ok" in " ".join(out.output.split())
    assert (models / "u2netp.onnx").read_bytes() == real.read_bytes()
    out = CliRunner().invoke(cli, ["models", "pull", "lama"], env=env)
    assert out.exit_code == 1
    lama = by_name("lama")
    assert lama is not None
    flat = " ".join(out.output.split())
    assert lama.sha256 in flat and hashlib.sha256(b"not lama").hexdigest() in flat
    assert sorted(p.name for p in models.iterdir()) == ["u2netp.onnx"]
    out = CliRunner().invoke(cli, ["models", "pull", "nonesuch"], env=env)
    assert out.exit_code == 2 and "not in the catalogue" in out.output
    out = CliRunner().invoke(cli, ["models", "pull"], env=env)
    assert out.exit_code == 2 and "--all" in out.output


def test_all_leaves_out_the_non_commercial_models_unless_asked(
    server: Files, tmp_path: Path
) -> None:
    models = tmp_path / "models"
    env = {
        "PIXELMILL_MODELS_DIR": str(models),
        "PIXELMILL_MODELS_MIRROR": server.base + "/empty",  # every file a 404: nothing lands
        "PIXELMILL_DATA_DIR": str(tmp_path / "d"),
    }
    out = CliRunner().invoke(cli, ["models", "pull", "--all"], env=env)
    assert out.exit_code == 1
    asked = {p.rsplit("/", 1)[1] for p in server.paths}
    assert "lama_fp32.onnx" in asked and "gfpgan_1.4.onnx" in asked
    assert "codeformer.onnx" not in asked and "bria-rmbg.onnx" not in asked
    server.paths.clear()
    out = CliRunner().invoke(cli, ["models", "pull", "--all", "--non-commercial"], env=env)
    assert {"codeformer.onnx", "bria-rmbg.onnx"} <= {p.rsplit("/", 1)[1] for p in server.paths}
    assert "not for commercial use" in out.output
    assert not models.exists() or list(models.iterdir()) == []
