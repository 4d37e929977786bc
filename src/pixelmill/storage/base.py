"""The storage protocol every backend implements, and the key rule they share."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

_KEY = re.compile(r"^[A-Za-z0-9_\-]+(/[A-Za-z0-9_\-]+)*\.[a-z0-9]{2,5}$")
_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".json": "application/json",
    ".mp4": "video/mp4",
}


def valid_key(key: str) -> bool:
    """Keys are relative paths of safe characters ending in an extension (``results/ab12.png``):
    no ``..``, no leading slash, nothing a URL or a file system would read differently."""
    return _KEY.fullmatch(key) is not None


def content_type_for(key: str) -> str:
    """The media type a key's extension names."""
    return _TYPES.get(key[key.rfind(".") :], "application/octet-stream")


@dataclass(frozen=True)
class StoredObject:
    data: bytes
    content_type: str


class ObjectStorage(Protocol):
    """A flat store of small objects under validated keys. ``get`` of a missing or invalid key
    is ``None``; ``delete`` of a missing one does nothing."""

    def put(self, key: str, data: bytes, content_type: str) -> None: ...

    def get(self, key: str) -> StoredObject | None: ...

    def delete(self, key: str) -> None: ...

    def delete_older_than(self, cutoff: datetime) -> int:
        """Remove objects written before ``cutoff``; returns how many."""
        ...

    def check(self) -> None:
        """Raise if the store cannot be used now (readiness); cheap, no object written."""
        ...
