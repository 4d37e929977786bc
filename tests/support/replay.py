"""Record the HTTP tests' requests and answers, and compare two recordings (before/after a change).

Recording is opt-in: with ``PIXELMILL_RECORD_HTTP=/path/run.jsonl`` set, every request a test
makes through a ``TestClient`` (the in-process client every HTTP test uses) is written, one line
per test: the node id, the outcome, and per request its method, path, JSON body, status code and
JSON answer. Values that change from run to run are masked by their shape, not by listed values:
UUIDs, JWTs, long random tokens, ISO times, the scheme and host of URLs, integer ids (keys ``id``,
``*_id``), durations (keys naming seconds, milliseconds, durations) and long blobs (hashed).
Consecutive identical GETs (polling a job until it ends) fold into the last one, since how many
polls a run takes is timing. With ``PIXELMILL_RECORD_SEEDS=<n>`` also set, the job and batch
seeds (``secrets.randbelow``) follow a fixed sequence restarted at every test, so what a seed
picks (scenes, avatar names, caption templates) is the same in both recordings.

This module imports nothing from the rest of the suite, so it can be loaded into an older
checkout without committing to it: ``PYTHONPATH=<dir holding this file> pytest -p replay ...``.
In this tree the root ``conftest.py`` registers it (it does nothing unless the variable is set).

Comparing: ``python -m tests.support.replay BEFORE.jsonl AFTER.jsonl [--noise AFTER2.jsonl]
[--rename OLD=NEW] [--json report.json] [--unmatched]``. A test is compared when both recordings
hold it under the same node id (after ``--rename``), it passed on both sides, and it made the same
request sequence (methods, masked paths and bodies); each answer is compared field by field.
Added keys are allowed and listed; a changed status, a removed key, a changed value or a list
grown or shrunk is a difference and makes the exit status 1, unless a second recording of AFTER
(``--noise``) differs at the same spot (random seeds, thread interleavings): that is noise.
See docs/architecture.md, "Replaying the HTTP tests".
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import re
import secrets
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx
import pytest
from starlette.testclient import TestClient

ENV = "PIXELMILL_RECORD_HTTP"

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")
_ORIGIN = re.compile(r"\b(?:https?|wss?)://[^/\s\"'?#]+")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# A run of 16+ word characters with at least one digit and one letter: keys, tokens, hashes.
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{16,}"
)
# Hex runs of 8+ with a digit and a letter: random suffixes (user-3f9a0c1b2e@example.com).
_HEX = re.compile(
    r"(?<![A-Za-z0-9])(?:(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}"
    r"|(?=[0-9A-F]*\d)(?=[0-9A-F]*[A-F])[0-9A-F]{8,})(?![A-Za-z0-9])"
)
# Unix times in seconds (2017 to 2033) written in text, such as a signed link's exp=.
_EPOCH = re.compile(r"(?<![\w.])1[5-9]\d{8}(?![\w.])")
_DURATION_KEY = re.compile(
    r"(^|_)(seconds?|secs?|ms|millis(econds)?|duration|elapsed|latency|took|uptime|time)($|_)"
)
_ID_KEY = re.compile(r"(^|_)ids?$")
_BLOB = 256


def _mask_text(text: str) -> str:
    if len(text) > _BLOB:
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        return f"<blob {len(text)} chars sha {digest}>"
    text = _ORIGIN.sub("<origin>", text)
    text = _JWT.sub("<jwt>", text)
    text = _UUID.sub("<uuid>", text)
    text = _TIME.sub("<time>", text)
    text = _EPOCH.sub("<epoch>", text)
    text = _TOKEN.sub("<token>", text)
    text = _HEX.sub("<hex>", text)
    if text.startswith(("/", "<origin>/")) and not any(c.isspace() for c in text):
        # A link: its integer path segments are ids (poll_url: <origin>/api/v2/ad-pack/61).
        head, _, query = text.partition("?")
        head = "/".join("<int>" if s.isdigit() else s for s in head.split("/"))
        text = head + ("?" + query if query else "")
    return text


def normalise(value: Any, key: str = "") -> Any:
    """The value with everything that differs from run to run masked by its shape."""
    if isinstance(value, dict):
        return {k: normalise(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v, key) for v in value]
    lowered = key.lower()
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        if _ID_KEY.search(lowered) and isinstance(value, int):
            return "<int id>"
        if _DURATION_KEY.search(lowered):
            return "<duration>"
        return value
    if isinstance(value, str):
        if _DATE.match(value):
            return "<date>"
        if _ID_KEY.search(lowered):
            # A row number inside an id (processing_id "ledger-217") depends on the test order.
            return re.sub(r"(?<![A-Za-z0-9])\d+(?![A-Za-z0-9])", "<int>", _mask_text(value))
        return _mask_text(value)
    return value


def normalise_path(url: httpx.URL | str) -> str:
    """The request's path and query, ids masked: integer segments and masked text."""
    parts = urlsplit(str(url))
    segments = ["<int>" if s.isdigit() else _mask_text(s) for s in parts.path.split("/")]
    path = "/".join(segments)
    if parts.query:
        query = [(k, str(normalise(v, k))) for k, v in parse_qsl(parts.query, True)]
        path += "?" + urlencode(query, safe="<>")
    return path


def _body(content: bytes, content_type: str) -> Any:
    if not content:
        return None
    if "json" in content_type:
        try:
            return normalise(json.loads(content))
        except ValueError:
            pass
    if "x-www-form-urlencoded" in content_type:
        return {"<form>": {k: normalise(v, k) for k, v in parse_qsl(content.decode(), True)}}
    if "multipart/form-data" in content_type:
        names = sorted(set(re.findall(rb'name="([^"]+)"', content)))
        return {"<multipart>": [n.decode() for n in names]}
    return {"<non-json>": content_type.split(";")[0]}


@dataclass
class Exchange:
    method: str
    path: str
    request: Any
    status: int
    response: Any
    folded: int = 0

    def key(self) -> tuple[str, str, str]:
        return self.method, self.path, json.dumps(self.request, sort_keys=True)


@dataclass
class Recorder:
    """Collects the current test's exchanges; one JSON line per test on finish."""

    out: Path
    test: str | None = None
    exchanges: list[Exchange] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, request: httpx.Request, response: httpx.Response) -> None:
        try:
            content = response.content
        except httpx.ResponseNotRead:
            content = b""
        exchange = Exchange(
            method=request.method,
            path=normalise_path(request.url),
            request=_body(request.content, request.headers.get("content-type", "")),
            status=response.status_code,
            response=_body(content, response.headers.get("content-type", "")),
        )
        with self.lock:
            if self.test is None:
                return
            last = self.exchanges[-1] if self.exchanges else None
            if last and exchange.method == "GET" and last.key() == exchange.key():
                exchange.folded = last.folded + 1
                self.exchanges[-1] = exchange
            else:
                self.exchanges.append(exchange)

    def start(self, nodeid: str) -> None:
        with self.lock:
            self.test, self.exchanges = nodeid, []
        if _seed_base is not None:
            fix_seeds(_seed_base)

    def finish(self, outcome: str) -> None:
        with self.lock:
            line = {
                "test": self.test,
                "outcome": outcome,
                "requests": [vars(e) for e in self.exchanges],
            }
            self.test, self.exchanges = None, []
        with self.out.open("a") as f:
            f.write(json.dumps(line, sort_keys=True) + "\n")


_recorder: Recorder | None = None
_outcomes: dict[str, str] = {}
_original_send = httpx.Client.send


def _send(self: httpx.Client, request: httpx.Request, **kwargs: Any) -> httpx.Response:
    response = _original_send(self, request, **kwargs)
    if _recorder is not None:
        _recorder.add(request, response)
    return response


@contextmanager
def recording(out: Path) -> Iterator[Recorder]:
    """Record the ``TestClient`` requests made inside the block into ``out`` (the recorder of
    an outer recording, if any, is put back after)."""
    global _recorder
    previous, _recorder = _recorder, Recorder(out)
    TestClient.send = _send
    try:
        yield _recorder
    finally:
        _recorder = previous
        if previous is None:
            del TestClient.send


_seed_base: int | None = None
_draws: Iterator[int] = itertools.count()
_randbelow = secrets.randbelow


def _fixed_randbelow(exclusive_upper_bound: int) -> int:
    """The i-th draw of the current test: the same in every run (see ``fix_seeds``)."""
    if _seed_base is None:
        return _randbelow(exclusive_upper_bound)
    return (_seed_base * 1_000_003 + next(_draws) * 7919) % exclusive_upper_bound


def fix_seeds(base: int | None) -> None:
    """With a base, ``secrets.randbelow`` (the job and batch seeds) draws a fixed sequence that
    starts again at every test, so the scenes, names and captions a seed picks are the same
    in both recordings; ``None`` puts the real draw back."""
    global _seed_base, _draws
    _seed_base, _draws = base, itertools.count()
    secrets.randbelow = _randbelow if base is None else _fixed_randbelow


def pytest_configure(config: pytest.Config) -> None:
    global _recorder
    target = os.environ.get("PIXELMILL_RECORD_HTTP")
    if target and _recorder is None:
        TestClient.send = _send
        _recorder = Recorder(Path(target))
        seeds = os.environ.get("PIXELMILL_RECORD_SEEDS")
        if seeds:
            fix_seeds(int(seeds))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    if _recorder is None:
        yield
        return
    _recorder.start(item.nodeid)
    yield
    _recorder.finish(_outcomes.pop(item.nodeid, "unknown"))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _recorder is None:
        return
    if report.failed:
        _outcomes[report.nodeid] = f"failed in {report.when}"
    elif report.skipped:
        _outcomes.setdefault(report.nodeid, "skipped")
    elif report.when == "call":
        _outcomes.setdefault(report.nodeid, "passed")


# --- comparing ---------------------------------------------------------------------------


@dataclass
class Difference:
    test: str
    index: int
    method: str
    path: str
    kind: str  # status changed | key removed | key added | value changed | items added/removed
    where: str
    before: Any
    after: Any
    noise: bool = False

    def spot(self) -> tuple[str, str, str, str]:
        """Where it is, list positions and the request's place in its test left out: a value
        drawn at random (a scene per job seed) may land on any item or any poll."""
        return self.test, self.method, self.path, re.sub(r"\[\d*:?\d*\]", "[*]", self.where)

    def line(self) -> str:
        at = f"{self.test} #{self.index} {self.method} {self.path}"
        return f"{self.kind}: {at} {self.where}: {_short(self.before)} -> {_short(self.after)}"


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def diff_json(before: Any, after: Any, where: str = "$") -> Iterator[tuple[str, str, Any, Any]]:
    """(kind, where, before, after) for each difference between two masked JSON values."""
    if isinstance(before, dict) and isinstance(after, dict):
        for k in before:
            if k not in after:
                yield "key removed", f"{where}.{k}", before[k], None
            else:
                yield from diff_json(before[k], after[k], f"{where}.{k}")
        for k in after:
            if k not in before:
                yield "key added", f"{where}.{k}", None, after[k]
        return
    if isinstance(before, list) and isinstance(after, list):
        # Item by item over the common part; a longer or shorter list is one more difference.
        for i, (b, a) in enumerate(zip(before, after, strict=False)):
            yield from diff_json(b, a, f"{where}[{i}]")
        if len(after) > len(before):
            yield "items added", f"{where}[{len(before)}:]", len(before), after[len(before) :]
        elif len(after) < len(before):
            yield "items removed", f"{where}[{len(after)}:]", before[len(after) :], len(after)
        return
    if before != after or type(before) is not type(after):
        yield "value changed", where, before, after


def load(path: Path, renames: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """A recording by node id, masked again with this module's masks (so a recording made by
    an older copy of the recorder gets the newer masks); ``renames`` maps an old node id
    prefix (a moved test file) to its new one."""
    records: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        for exchange in record["requests"]:
            exchange["path"] = normalise_path(exchange["path"])
            exchange["request"] = normalise(exchange["request"])
            exchange["response"] = normalise(exchange["response"])
        test: str = record["test"]
        for old, new in (renames or {}).items():
            if test.startswith(old):
                test = new + test[len(old) :]
        records[test] = record
    return records


@dataclass
class Report:
    tests_before: int = 0
    tests_after: int = 0
    tests_compared: int = 0
    requests_compared: int = 0
    identical: int = 0
    added_keys_only: int = 0
    noise_only: int = 0
    differing: int = 0
    unmatched: Counter[str] = field(default_factory=Counter)
    unmatched_tests: list[tuple[str, str]] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)

    @property
    def failures(self) -> list[Difference]:
        return [d for d in self.differences if d.kind != "key added" and not d.noise]

    def summary(self) -> dict[str, Any]:
        counts = {f.name: getattr(self, f.name) for f in fields(self) if f.type == "int"}
        return {**counts, "unmatched": dict(self.unmatched)}


def _unmatched_reason(before: dict[str, Any], after: dict[str, Any]) -> str | None:
    if before["outcome"] != "passed" or after["outcome"] != "passed":
        return f"outcome {before['outcome']} / {after['outcome']}"
    b, a = before["requests"], after["requests"]
    if not b and not a:
        return "no HTTP requests"
    for i, (x, y) in enumerate(zip(b, a, strict=False)):
        if (x["method"], x["path"]) != (y["method"], y["path"]):
            return f"request #{i} differs ({x['method']} {x['path']} / {y['method']} {y['path']})"
        if x["request"] != y["request"]:
            return f"request #{i} sends a different body"
    if len(b) != len(a):
        return f"request count {len(b)} / {len(a)}"
    return None


def noise_spots(after: dict[str, dict[str, Any]], again: dict[str, dict[str, Any]]) -> set[Any]:
    """Where two runs of the same code differ: the spot (``Difference.spot``) of each difference,
    and the node ids whose request sequence differs between the runs."""
    report = compare(after, again)
    spots: set[Any] = {d.spot() for d in report.differences if d.kind != "key added"}
    spots |= {test for test, reason in report.unmatched_tests if reason.startswith("request")}
    return spots


def compare(
    before: dict[str, dict[str, Any]],
    after: dict[str, dict[str, Any]],
    noise: set[Any] | None = None,
) -> Report:
    """Each test both recordings hold with the same request sequence, answer by answer.
    Differences found at a spot in ``noise`` (see ``noise_spots``) are marked, not failures."""
    noise = noise or set()
    report = Report(tests_before=len(before), tests_after=len(after))
    for test in sorted(set(before) | set(after)):
        if test not in after:
            report.unmatched["only before (test gone or renamed)"] += 1
            report.unmatched_tests.append((test, "only before"))
            continue
        if test not in before:
            report.unmatched["only after (test added or renamed)"] += 1
            report.unmatched_tests.append((test, "only after"))
            continue
        reason = _unmatched_reason(before[test], after[test])
        if reason is not None:
            report.unmatched[reason.split(" (")[0].split(" #")[0]] += 1
            report.unmatched_tests.append((test, reason))
            continue
        report.tests_compared += 1
        pairs = zip(before[test]["requests"], after[test]["requests"], strict=True)
        for i, (b, a) in enumerate(pairs):
            report.requests_compared += 1
            found = []
            if b["status"] != a["status"]:
                found.append(("status changed", "status", b["status"], a["status"]))
            found.extend(diff_json(b["response"], a["response"]))
            diffs = [Difference(test, i, b["method"], b["path"], *f) for f in found]
            for d in diffs:
                d.noise = d.kind != "key added" and (d.spot() in noise or test in noise)
            report.differences.extend(diffs)
            if not diffs:
                report.identical += 1
            elif all(d.kind == "key added" for d in diffs):
                report.added_keys_only += 1
            elif all(d.kind == "key added" or d.noise for d in diffs):
                report.noise_only += 1
            else:
                report.differing += 1
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Compare two HTTP recordings (before, after).")
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--json", type=Path, help="write the full report here")
    parser.add_argument("--unmatched", action="store_true", help="list each unmatched test")
    parser.add_argument(
        "--noise",
        type=Path,
        help="a second recording of AFTER (same code): what differs between the two is noise",
    )
    parser.add_argument(
        "--rename",
        action="append",
        default=[],
        metavar="OLD=NEW",
        help="a node id prefix in BEFORE (a moved test file) and its name in AFTER",
    )
    args = parser.parse_args(argv)
    renames = dict(r.split("=", 1) for r in args.rename)
    after = load(args.after)
    noise = noise_spots(after, load(args.noise)) if args.noise else set()
    report = compare(load(args.before, renames), after, noise)
    for name, value in report.summary().items():
        print(f"{name}: {value}")
    added = Counter(
        (d.method, d.path, d.where) for d in report.differences if d.kind == "key added"
    )
    if added:
        print(f"\nadded keys (allowed), {len(added)} distinct:")
        for (method, path, where), n in sorted(added.items()):
            print(f"  {method} {path} {where} (x{n})")
    noisy = [d for d in report.differences if d.noise]
    if noisy:
        print(f"\nnoise (these spots differ between two runs of AFTER too), {len(noisy)}:")
        for d in noisy:
            print("  " + d.line())
    if report.failures:
        print(f"\ndifferences ({len(report.failures)}):")
        for d in report.failures:
            print("  " + d.line())
    if args.unmatched:
        print("\nunmatched tests:")
        for test, reason in report.unmatched_tests:
            print(f"  {test}: {reason}")
    if args.json:
        full = {
            "summary": report.summary(),
            "differences": [vars(d) for d in report.differences],
            "unmatched_tests": report.unmatched_tests,
        }
        args.json.write_text(json.dumps(full, indent=1, sort_keys=True))
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
