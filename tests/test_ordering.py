"""The heaviest-first order of ``tests/support/ordering.py``: whole modules by their recorded
seconds, unknown modules as the median, the order inside a module kept."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pytest

from tests.support.ordering import DURATIONS, heaviest_first, load_durations


@dataclass
class Item:
    nodeid: str


def _ids(items: list[pytest.Item]) -> list[str]:
    return [item.nodeid for item in items]


def test_modules_go_heaviest_first_and_keep_their_inner_order() -> None:
    items = [
        Item(n) for n in ("a.py::t1", "b.py::t1", "a.py::t2", "c.py::t1", "new.py::t1", "b.py::t2")
    ]
    seconds = {"a.py": 1.0, "b.py": 30.0, "c.py": 5.0}  # median 5: new.py ties c.py
    ordered = heaviest_first(cast(list[pytest.Item], items), seconds)
    assert _ids(ordered) == [
        "b.py::t1",
        "b.py::t2",
        "c.py::t1",
        "new.py::t1",
        "a.py::t1",
        "a.py::t2",
    ]
    # Nothing recorded: modules stay in collection order, each one's tests together.
    assert _ids(heaviest_first(cast(list[pytest.Item], items), {})) == [
        "a.py::t1",
        "a.py::t2",
        "b.py::t1",
        "b.py::t2",
        "c.py::t1",
        "new.py::t1",
    ]


def test_the_recorded_durations_name_real_modules(tmp_path: Path) -> None:
    seconds = load_durations()
    assert len(seconds) > 100
    root = DURATIONS.parent.parent
    gone = [module for module in seconds if not (root / module).exists()]
    assert not gone, f"run `scripts/test --store-durations` to refresh {DURATIONS}: {gone}"
    broken = tmp_path / "durations.json"
    broken.write_text("not json")
    assert load_durations(broken) == {}
