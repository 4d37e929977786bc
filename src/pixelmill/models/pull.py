"""Fetch a catalogued model into the models folder, checksum first.

The file is downloaded under a hidden temporary name (``.<file>.part``) next to its final name;
an interrupted download leaves that part behind and the next pull resumes it with an HTTP
``Range`` request. Only when the whole file's sha256 (and rembg's md5, where the catalogue has
one) matches the catalogue is it renamed to its final name, so a model the engines can see has
always been checked. A mismatch removes the part and raises :class:`DigestMismatch` naming both
digests: nothing is left behind.

Serving never calls this: only ``pixelmill models pull`` does.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import httpx

from pixelmill.models.catalogue import CatalogueEntry

Progress = Callable[[int, int | None], None]
"""``progress(bytes_so_far, total_or_None)``, called as the file arrives."""

CHUNK = 1 << 20


class PullError(Exception):
    """The model could not be fetched (network, HTTP status, a wrong size)."""


class DigestMismatch(PullError):
    """What arrived is not the catalogued file; nothing was kept."""

    def __init__(self, entry: CatalogueEntry, algorithm: str, expected: str, actual: str):
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"{entry.name}: {algorithm} mismatch: expected {expected}, got {actual}; "
            "the download was removed"
        )


def source_url(entry: CatalogueEntry, mirror: str | None) -> str:
    """Where ``entry`` is fetched from: ``MIRROR/<file>`` with a mirror, else its upstream."""
    if mirror:
        return f"{mirror.rstrip('/')}/{entry.file}"
    return entry.url


def part_path(entry: CatalogueEntry, folder: Path) -> Path:
    """The temporary name a download of ``entry`` grows under."""
    return folder / f".{entry.file}.part"


def file_digest(path: Path, algorithm: str = "sha256") -> str:
    """The hex digest of a file, read in 1 MiB blocks."""
    digest = hashlib.new(algorithm)
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def is_present(entry: CatalogueEntry, folder: Path) -> bool:
    """Whether the catalogued file is in ``folder`` with the catalogued sha256."""
    target = folder / entry.file
    return target.is_file() and file_digest(target) == entry.sha256


def pull(
    entry: CatalogueEntry,
    folder: Path,
    *,
    mirror: str | None = None,
    client: httpx.Client | None = None,
    progress: Progress | None = None,
) -> Path:
    """Fetch ``entry`` into ``folder`` (resuming a part left by an earlier try) and return
    its final path. A file already there with the right digest is kept as it is."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / entry.file
    if target.is_file() and file_digest(target) == entry.sha256:
        return target
    part = part_path(entry, folder)
    own = client is None
    http = client or httpx.Client(follow_redirects=True, timeout=httpx.Timeout(60.0))
    try:
        _download(http, source_url(entry, mirror), part, entry.size, progress)
    finally:
        if own:
            http.close()
    _check(entry, part)
    os.replace(part, target)
    return target


def _download(
    http: httpx.Client, url: str, part: Path, size: int | None, progress: Progress | None
) -> None:
    offset = part.stat().st_size if part.is_file() else 0
    if size is not None and offset >= size:
        return  # a complete part left by a run that stopped before its check
    headers = {"Range": f"bytes={offset}-"} if offset else {}
    try:
        with http.stream("GET", url, headers=headers) as response:
            if response.status_code == 416 and offset:
                return  # nothing past the part: it is whole, the check decides
            if response.status_code not in (200, 206):
                raise PullError(f"GET {url}: HTTP {response.status_code}")
            if response.status_code == 200:
                offset = 0  # the server ignored the range: start again
            length = response.headers.get("content-length")
            total = offset + int(length) if length and length.isdigit() else size
            with part.open("ab" if offset else "wb") as out:
                done = offset
                if progress:
                    progress(done, total)
                for block in response.iter_bytes():  # as it arrives: a drop keeps it all
                    out.write(block)
                    done += len(block)
                    if progress:
                        progress(done, total)
    except httpx.HTTPError as exc:
        raise PullError(f"GET {url}: {exc} (run the pull again to resume)") from exc


def _check(entry: CatalogueEntry, part: Path) -> None:
    checks = [("sha256", entry.sha256)]
    if entry.md5:
        checks.append(("md5", entry.md5))
    for algorithm, expected in checks:
        actual = file_digest(part, algorithm)
        if actual != expected:
            part.unlink(missing_ok=True)
            raise DigestMismatch(entry, algorithm, expected, actual)
