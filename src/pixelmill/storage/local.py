"""Local-disk storage under ``data_dir/files``. Keys are relative paths of safe characters."""

from __future__ import annotations

import os
import tempfile
from datetime import datetime
from pathlib import Path

from pixelmill.storage.base import StoredObject, content_type_for, valid_key


class LocalStorage:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        if not valid_key(key):
            raise ValueError(f"invalid storage key: {key!r}")
        return self.root / key

    def put(self, key: str, data: bytes, content_type: str) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write then rename, so a reader never sees half a file.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def get(self, key: str) -> StoredObject | None:
        try:
            path = self._path(key)
            data = path.read_bytes()
        except (ValueError, FileNotFoundError, IsADirectoryError):
            return None
        return StoredObject(data, content_type_for(key))

    def delete(self, key: str) -> None:
        try:
            self._path(key).unlink(missing_ok=True)
        except ValueError:
            return

    def check(self) -> None:
        if not self.root.is_dir():
            raise OSError(f"{self.root} is not a directory")
        if not os.access(self.root, os.W_OK | os.X_OK):
            raise PermissionError(f"{self.root} is not writable")

    def delete_older_than(self, cutoff: datetime) -> int:
        limit = cutoff.timestamp()
        removed = 0
        for path in self.root.rglob("*"):
            if path.is_file() and path.stat().st_mtime < limit:
                path.unlink(missing_ok=True)
                removed += 1
        return removed
