"""The storage protocol every backend implements."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True)
class StoredObject:
    data: bytes
    content_type: str


class ObjectStorage(Protocol):
    def put(self, key: str, data: bytes, content_type: str) -> None: ...

    def get(self, key: str) -> StoredObject | None: ...

    def delete(self, key: str) -> None: ...

    def delete_older_than(self, cutoff: datetime) -> int:
        """Remove objects written before ``cutoff``; returns how many."""
        ...

    def check(self) -> None:
        """Raise if the store cannot be used now (readiness); cheap, no object written."""
        ...
