"""The one lazy, locked, load-once holder behind every model an engine uses.

Models (ONNX sessions, the OCR instance, mediapipe graphs) cost time and memory to build, and
a process builds each at most once, on first use, however many worker threads ask for it at the
same moment. :class:`Lazy` is that pattern written once: engines' ``load()`` (``BaseEngine``),
:class:`~pixelmill.engines.runtime.onnx.OnnxModel`, the OCR holder and the face, hand and pose
graphs all use it instead of their own lock and flag.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar, cast

T = TypeVar("T")


class Lazy(Generic[T]):
    """A value built by ``build()`` on first use, once, under a lock.

    The fast path (already built) takes no lock. A ``build`` that raises leaves nothing behind,
    so the next call tries again."""

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._value: T | None = None
        self._built = False

    @property
    def loaded(self) -> bool:
        """Whether the value has been built."""
        return self._built

    def get(self) -> T:
        """The value, built now if this is the first call (double-checked under the lock)."""
        if not self._built:
            with self._lock:
                if not self._built:
                    self._value = self._build()
                    self._built = True
        return cast(T, self._value)

    def load(self) -> None:
        """Build the value now if needed. Idempotent and safe to call from many threads."""
        self.get()
