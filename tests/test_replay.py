"""The replay harness (tests/support/replay.py) on a tiny real app: pytest runs one test file
twice with the recorder switched on by its environment variable, once against the app "before"
and once "after" (a key added, a key removed, a value and a status changed); the comparer must
list each change, allow the added key, and mask what differs from run to run."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.support import replay

ROOT = Path(__file__).resolve().parents[1]
PYTEST = [
    sys.executable,
    "-m",
    "pytest",
    "-q",
    "-p",
    "tests.support.replay",
    "-p",
    "no:cacheprovider",
]

APP_TEST = """
import os, secrets, time, uuid, datetime
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from fastapi.testclient import TestClient

AFTER = os.environ["REPLAY_SIDE"] == "after"
app = FastAPI()
polls = {"n": 0}


@app.post("/things")
def create(body: dict) -> JSONResponse:
    thing = {
        "id": str(uuid.uuid4()),
        "name": body["name"],
        "created_at": datetime.datetime.now(datetime.UTC).isoformat(),
        "url": f"http://127.0.0.1:{os.getpid()}/things/" + str(uuid.uuid4()),
        "key": "pm_" + uuid.uuid4().hex,
        "took_ms": time.perf_counter(),
        "size": 3,
        "pick": time.time_ns() % 1000003,
        "seed": secrets.randbelow(2**31),
        "tags": ["a", "b"] if AFTER else ["a"],
        "poll": f"http://testserver/things/{os.getpid()}",
        "email": "user-" + uuid.uuid4().hex[:9] + "f@example.com",
        "link": f"http://testserver/f.png?exp={int(time.time()) + 3600}&sig={uuid.uuid4().hex}",
    }
    if AFTER:
        thing["test"] = False
    else:
        thing["legacy"] = True
    return JSONResponse(thing, status_code=201)


@app.get("/things/{thing_id}")
def read(thing_id: str) -> dict:
    polls["n"] += 1
    return {"status": "done" if polls["n"] > 2 else "running", "size": 4 if AFTER else 3}


@app.get("/missing")
def missing() -> JSONResponse:
    return JSONResponse({"detail": "gone"}, status_code=410 if AFTER else 404)


def test_things() -> None:
    client = TestClient(app)
    made = client.post("/things", json={"name": "a"}).json()
    for _ in range({n_polls}):
        client.get(f"/things/{made['id']}")
    client.get("/missing")


def test_no_requests() -> None:
    assert True
"""


def _record(tmp_path: Path, side: str, polls: int) -> Path:
    test_file = tmp_path / side / "test_app.py"
    test_file.parent.mkdir()
    test_file.write_text(APP_TEST.replace("{n_polls}", str(polls)))
    out = tmp_path / f"{side}.jsonl"
    env = {
        **os.environ,
        replay.ENV: str(out),
        "PIXELMILL_RECORD_SEEDS": "7",
        "REPLAY_SIDE": "before" if side == "before" else "after",
        "PYTHONPATH": str(ROOT),
    }
    run = subprocess.run(
        [*PYTEST, str(test_file)],
        cwd=test_file.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return out


def test_recorder_and_comparer_on_a_tiny_app(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _record(tmp_path, "before", polls=3)
    after = _record(tmp_path, "after", polls=5)
    again = _record(tmp_path, "again", polls=4)

    # PIXELMILL_RECORD_SEEDS: the seed drawn with secrets.randbelow is the same in every run.
    seeds = {
        replay.load(p)["test_app.py::test_things"]["requests"][0]["response"]["seed"]
        for p in (before, after, again)
    }
    assert len(seeds) == 1

    records = replay.load(before)
    assert set(records) == {"test_app.py::test_things", "test_app.py::test_no_requests"}
    things = records["test_app.py::test_things"]
    assert things["outcome"] == "passed"
    created, polled, missing = things["requests"]
    assert created["request"] == {"name": "a"}
    assert created["status"] == 201
    assert created["response"] == {
        "id": "<uuid>",
        "name": "a",
        "created_at": "<time>",
        "url": "<origin>/things/<uuid>",
        "key": "<token>",
        "took_ms": "<duration>",
        "size": 3,
        "pick": created["response"]["pick"],
        "seed": created["response"]["seed"],
        "tags": ["a"],
        "poll": "<origin>/things/<int>",
        "email": "user-<hex>@example.com",
        "link": "<origin>/f.png?exp=<epoch>&sig=<token>",
        "legacy": True,
    }
    # Three polls of the same path fold into the last one (its answer is the one kept).
    assert polled["path"] == "/things/<uuid>"
    assert polled["folded"] == 2
    assert polled["response"] == {"status": "done", "size": 3}
    assert missing["status"] == 404

    code = replay.main([str(before), str(after), "--json", str(tmp_path / "report.json")])
    assert code == 1
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["summary"] == {
        "tests_before": 2,
        "tests_after": 2,
        "tests_compared": 1,
        "requests_compared": 3,
        "identical": 0,
        "added_keys_only": 0,
        "noise_only": 0,
        "differing": 3,
        "unmatched": {"no HTTP requests": 1},
    }
    found = {
        (d["index"], d["kind"], d["where"], json.dumps(d["after"])) for d in report["differences"]
    }
    pick = replay.load(after)["test_app.py::test_things"]["requests"][0]["response"]["pick"]
    assert found == {
        (0, "value changed", "$.pick", str(pick)),
        (0, "items added", "$.tags[1:]", '["b"]'),
        (0, "key added", "$.test", "false"),
        (0, "key removed", "$.legacy", "null"),
        (1, "value changed", "$.size", "4"),
        (2, "status changed", "status", "410"),
    }
    printed = capsys.readouterr().out
    assert "added keys (allowed), 1 distinct:" in printed
    assert "differences (5):" in printed

    # A second run of "after" shows that "pick" differs between runs of the same code: noise.
    noise = replay.noise_spots(replay.load(after), replay.load(again))
    assert noise == {("test_app.py::test_things", "POST", "/things", "$.pick")}
    assert replay.main([str(before), str(after), "--noise", str(again)]) == 1
    printed = capsys.readouterr().out
    assert "noise (these spots differ between two runs of AFTER too), 1:" in printed
    assert "differences (4):" in printed
    assert "$.pick" not in printed.split("differences (4):")[1]

    # The same recording against itself: everything identical, exit status 0.
    assert replay.main([str(before), str(before)]) == 0


def test_added_keys_alone_pass(tmp_path: Path) -> None:
    """Only added keys: listed, counted as added-keys-only, not a failure."""
    app = FastAPI()
    extra: dict[str, object] = {}

    @app.get("/plan")
    def plan() -> dict[str, object]:
        return {"name": "pro", "credits": 100, **extra}

    sides = []
    for side, added in (("before", {}), ("after", {"test": False})):
        extra.clear()
        extra.update(added)
        out = tmp_path / f"{side}.jsonl"
        with replay.recording(out) as recorder, TestClient(app) as client:
            recorder.start("t::plan")
            assert client.get("/plan").status_code == 200
            recorder.finish("passed")
        sides.append(replay.load(out))
    report = replay.compare(sides[0], sides[1])
    assert (report.requests_compared, report.identical, report.added_keys_only) == (1, 0, 1)
    assert report.failures == []
    assert [(d.kind, d.where) for d in report.differences] == [("key added", "$.test")]


def test_fixed_seeds_restart_at_every_test_and_can_be_put_back() -> None:
    real = secrets.randbelow
    try:
        replay.fix_seeds(3)
        first = [secrets.randbelow(2**31) for _ in range(3)]
        replay.fix_seeds(3)
        assert [secrets.randbelow(2**31) for _ in range(3)] == first
        assert len(set(first)) == 3
        replay.fix_seeds(4)
        assert secrets.randbelow(2**31) != first[0]
    finally:
        replay.fix_seeds(None)
    assert secrets.randbelow is real


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("USER-5C83E752E7@EXAMPLE.COM", "USER-<hex>@EXAMPLE.COM"),
        ("user-e38f02af14@example.com", "user-<hex>@example.com"),
        # A 10-digit run inside a random file name is part of the name, not a Unix time.
        (
            "/files/results/b81cb1795930217abcd.jpg?exp=1795930217&sig=0a1b",
            "/files/results/<token>.jpg?exp=<epoch>&sig=0a1b",
        ),
        ("http://127.0.0.1:8123/api/v2/ad-pack/61", "<origin>/api/v2/ad-pack/<int>"),
        ("750 ml, now $29 (24 hours)", "750 ml, now $29 (24 hours)"),
    ],
)
def test_masks_by_shape(text: str, masked: str) -> None:
    assert replay.normalise(text) == masked


def test_numbers_in_ids_are_masked() -> None:
    item = {"processing_id": "ledger-217", "id": "sku-9", "job_id": 12, "total": 3}
    assert replay.normalise(item) == {
        "processing_id": "ledger-<int>",
        "id": "sku-<int>",
        "job_id": "<int id>",
        "total": 3,
    }
