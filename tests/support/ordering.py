"""The heaviest test modules first.

``scripts/test`` runs pytest-xdist with ``--dist loadfile``: a module is a unit of work, handed
to the next idle worker in collection order. A heavy module collected last leaves the other
worker idle until it ends; handing out the longest first (the longest-processing-time rule)
keeps both busy to the end. Each module's seconds come from ``tests/durations.json``, written by
``--store-durations`` (a run of part of the suite updates the modules it ran); a module missing
there (a new one) counts as the median. Tests keep their order inside a module, and a
module's tests stay together."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path

import pytest

DURATIONS = Path(__file__).resolve().parents[1] / "durations.json"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-durations",
        action="store_true",
        help=f"write each module's total seconds to {DURATIONS.name} (orders later runs)",
    )


def module_of(nodeid: str) -> str:
    return nodeid.split("::")[0]


def load_durations(path: Path = DURATIONS) -> dict[str, float]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}


def heaviest_first(items: list[pytest.Item], seconds: dict[str, float]) -> list[pytest.Item]:
    """``items`` with whole modules ordered by their seconds, heaviest first (ties and unknown
    modules, counted as the median, keep their collection order)."""
    default = statistics.median(seconds.values()) if seconds else 0.0
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        first.setdefault(module_of(item.nodeid), index)

    def key(pair: tuple[int, pytest.Item]) -> tuple[float, int, int]:
        index, item = pair
        module = module_of(item.nodeid)
        return (-seconds.get(module, default), first[module], index)

    return [item for _, item in sorted(enumerate(items), key=key)]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seconds = load_durations()
    if seconds:
        items[:] = heaviest_first(items, seconds)


class _Recorder:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[module_of(report.nodeid)] += report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(session.config, "workerinput"):
            return  # an xdist worker: the controller sees every worker's reports
        # A run of part of the suite updates its modules and keeps the others' seconds.
        merged = {**load_durations(), **self.seconds}
        ordered = sorted(merged.items(), key=lambda kv: -kv[1])
        DURATIONS.write_text(json.dumps({k: round(v, 1) for k, v in ordered}, indent=0) + "\n")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("store_durations", False):
        config.pluginmanager.register(_Recorder(), "pixelmill-store-durations")
