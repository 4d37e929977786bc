"""Admission control of synchronous work: with one CPU worker and a queue of one, a burst gets
one request working, one waiting and the rest a fast 503 with ``Retry-After``; the refused ones
are charged nothing and decode nothing, the admitted ones are charged once each, and no
reservation is left held. On the JSON (v2, base64) and multipart (v1) surfaces."""

from __future__ import annotations

import asyncio
import base64
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from pydantic import BaseModel

from pixelmill.app import create_app
from pixelmill.engines.base import Engine, EngineInputs, EngineResult
from pixelmill.errors import ServerBusy
from pixelmill.generation import gallery
from pixelmill.imaging import DecodedImage
from pixelmill.operations.admission import Admission, trim_memory
from pixelmill.operations.inputs import ImageSource
from pixelmill.resources import Resources, build_resources
from pixelmill.worker import wire
from tests.operations.slow_server import SlowConvert
from tests.support.accounts import make_account
from tests.support.credits import balance_of, held_reservations, ledger_consistent
from tests.support.images import png_bytes
from tests.support.servers import live_server
from tests.support.settings import make_settings
from tests.support.waiting import wait_until

BURST = 6
CREDITS = 50


@pytest.fixture
def tiny(database_url: str, tmp_path: Path) -> Iterator[Resources]:
    """One CPU worker, one place in the queue, a 20 s longest wait."""
    settings = make_settings(
        database_url,
        tmp_path / "data",
        cpu_workers=1,
        max_queued_requests=1,
        max_queue_wait_seconds=20,
    )
    res = wire(build_resources(settings))
    yield res
    res.close()


@contextmanager
def _serve(res: Resources, headers: dict[str, str]) -> Iterator[httpx.Client]:
    """The app on a real uvicorn on 127.0.0.1, and a client for it."""
    with (
        live_server(create_app(res.settings, res)) as base,
        httpx.Client(base_url=base, headers=headers, timeout=120) as client,
    ):
        yield client


class Gated:
    """A real engine held at the start of each run until ``gate`` is set."""

    def __init__(self, engine: Engine, gate: threading.Event) -> None:
        self.engine = engine
        self.gate = gate
        self.started = threading.Event()
        self.Params: type[BaseModel] = engine.Params

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def run(self, inputs: EngineInputs, params: BaseModel) -> EngineResult:
        self.started.set()
        if not self.gate.wait(timeout=120):
            raise TimeoutError("the test never opened the gate")
        return self.engine.run(inputs, params)


class CountingDecodes:
    """Counts the inputs the pipeline's reader decodes."""

    def __init__(self, res: Resources) -> None:
        self.count = 0
        reader = res.pipeline.inputs
        original = reader.read_and_decode

        async def counted(source: ImageSource, user: Any) -> tuple[bytes, DecodedImage]:
            self.count += 1
            return await original(source, user)

        reader.read_and_decode = counted  # type: ignore[method-assign]


def _burst(
    res: Resources, send: Any, started: threading.Event, gate: threading.Event
) -> tuple[list[httpx.Response], list[float], int]:
    """Fire BURST requests at once; once one works and one waits, the rest must already be
    answered. Returns the answers, their times, and the decodes seen while the gate was shut."""
    decodes = CountingDecodes(res)
    with ThreadPoolExecutor(BURST) as pool:
        t0 = time.monotonic()

        def timed() -> tuple[httpx.Response, float]:
            response = send()
            return response, time.monotonic() - t0

        futures = [pool.submit(timed) for _ in range(BURST)]
        assert started.wait(60), [f.result()[0].text for f in futures if f.done()]
        wait_until(lambda: res.pipeline.admission.queued == 1, timeout=30)
        # Everyone else is refused while the first still works and the second still waits.
        wait_until(lambda: sum(f.done() for f in futures) == BURST - 2, timeout=30)
        decoded_while_shut = decodes.count
        gate.set()
        answers = [f.result(timeout=120) for f in futures]
    return [a for a, _ in answers], [t for _, t in answers], decoded_while_shut


def _check(res: Resources, acct_id: int, answers: list[httpx.Response], times: list[float]) -> None:
    ok = [r for r, _ in zip(answers, times, strict=True) if r.status_code == 200]
    busy = [(r, t) for r, t in zip(answers, times, strict=True) if r.status_code == 503]
    assert len(ok) == 2, [r.text for r in answers]
    assert len(busy) == BURST - 2, [r.text for r in answers]
    for r, t in busy:
        assert int(r.headers["Retry-After"]) >= 1
        detail = r.json()["detail"]
        assert "busy" in detail and "nothing was charged" in detail
        assert t < 30  # answered while the gate was still shut, not after the work
    # The two admitted are charged once each; the refused nothing; nothing is left held.
    assert balance_of(res, acct_id) == CREDITS - 2
    assert ledger_consistent(res, acct_id)
    assert held_reservations(res, acct_id) == 0
    assert res.pipeline.admission.active == 0 and res.pipeline.admission.queued == 0


def test_v2_burst_beyond_the_queue_gets_fast_503(tiny: Resources) -> None:
    acct = make_account(tiny, credits=CREDITS)
    gate = threading.Event()
    slow = SlowConvert(gate)
    tiny.pipeline.engines = {**tiny.pipeline.engines, "convert": slow}
    body = {"image_base64": base64.b64encode(png_bytes(40, 30)).decode(), "format": "png"}
    with _serve(tiny, acct.key_headers) as client:
        answers, times, decoded = _burst(
            tiny, lambda: client.post("/api/v2/convert", json=body), slow.started, gate
        )
    # While one worked and one waited, only the working one had its input decoded.
    assert decoded == 1
    _check(tiny, acct.id, answers, times)
    assert all(r.json()["credits_used"] == 1 for r in answers if r.status_code == 200)


def test_multipart_burst_beyond_the_queue_gets_fast_503(tiny: Resources) -> None:
    acct = make_account(tiny, credits=CREDITS)
    gate = threading.Event()
    op = "background_removal"
    real = tiny.pipeline.engines.get(op) or tiny.pipeline.engines["background"]
    gated = Gated(real, gate)
    tiny.pipeline.engines = {**tiny.pipeline.engines, op: cast(Engine, gated)}
    image = png_bytes(64, 48)
    with _serve(tiny, acct.key_headers) as client:
        answers, times, decoded = _burst(
            tiny,
            lambda: client.post(
                "/api/v1/remove-background", files={"file": ("p.png", image, "image/png")}
            ),
            gated.started,
            gate,
        )
    assert decoded == 1
    _check(tiny, acct.id, answers, times)


def test_a_waiter_past_the_longest_wait_gets_503_and_keeps_its_credits(
    database_url: str, tmp_path: Path
) -> None:
    settings = make_settings(
        database_url,
        tmp_path / "data",
        cpu_workers=1,
        max_queued_requests=4,
        max_queue_wait_seconds=0.5,
    )
    res = wire(build_resources(settings))
    try:
        acct = make_account(res, credits=CREDITS)
        gate = threading.Event()
        slow = SlowConvert(gate)
        res.pipeline.engines = {**res.pipeline.engines, "convert": slow}
        body = {"image_base64": base64.b64encode(png_bytes(40, 30)).decode()}
        with _serve(res, acct.key_headers) as client, ThreadPoolExecutor(2) as pool:
            first = pool.submit(client.post, "/api/v2/convert", json=body)
            assert slow.started.wait(60)
            t0 = time.monotonic()
            waiter = client.post("/api/v2/convert", json=body)
            waited = time.monotonic() - t0
            assert balance_of(res, acct.id) == CREDITS - 1  # only the first's hold
            gate.set()
            assert first.result(120).status_code == 200
        assert waiter.status_code == 503, waiter.text
        assert 0.4 < waited < 10
        assert "waited too long" in waiter.json()["detail"]
        assert int(waiter.headers["Retry-After"]) >= 1
        assert balance_of(res, acct.id) == CREDITS - 1
        assert ledger_consistent(res, acct.id)
        assert held_reservations(res, acct.id) == 0
    finally:
        res.close()


def test_admission_hands_slots_on_in_order_and_past_cancelled_waiters() -> None:
    async def scenario() -> list[str]:
        idle = threading.Event()
        gate = Admission(1, 2, 30, on_idle=idle.set)
        order: list[str] = []
        release_first = asyncio.Event()

        async def worker(name: str, hold: asyncio.Event | None = None) -> None:
            async with gate.slot():
                order.append(name)
                if hold is not None:
                    await hold.wait()

        first = asyncio.create_task(worker("first", release_first))
        await asyncio.sleep(0)
        cancelled = asyncio.create_task(worker("cancelled"))
        third = asyncio.create_task(worker("third"))
        await asyncio.sleep(0.01)
        assert (gate.active, gate.queued) == (1, 2)
        with pytest.raises(ServerBusy) as refused:
            await worker("refused")
        assert refused.value.status_code == 503
        assert int(refused.value.headers["Retry-After"]) >= 1
        cancelled.cancel()
        await asyncio.sleep(0.01)
        assert gate.queued == 1
        release_first.set()
        await asyncio.gather(first, third)
        assert (gate.active, gate.queued, gate.refused) == (0, 0, 1)
        assert await asyncio.to_thread(idle.wait, 5)
        return order

    assert asyncio.run(scenario()) == ["first", "third"]


def test_trim_memory_runs() -> None:
    # glibc's malloc_trim: returns whether memory was released; it must not raise.
    assert trim_memory() in (True, False)


def test_when_full_a_body_is_refused_unread_and_other_routes_still_answer(
    database_url: str, tmp_path: Path
) -> None:
    """With every place taken, a POST to an image route is refused before its body is parsed
    (a malformed body gets the 503, not a 422); reads and other routes are not gated."""
    settings = make_settings(database_url, tmp_path / "data", cpu_workers=1, max_queued_requests=0)
    res = wire(build_resources(settings))
    try:
        acct = make_account(res, credits=CREDITS)
        gate = threading.Event()
        slow = SlowConvert(gate)
        res.pipeline.engines = {**res.pipeline.engines, "convert": slow}
        body = {"image_base64": base64.b64encode(png_bytes(40, 30)).decode()}
        with _serve(res, acct.key_headers) as client, ThreadPoolExecutor(1) as pool:
            first = pool.submit(client.post, "/api/v2/convert", json=body)
            assert slow.started.wait(60)
            assert res.pipeline.admission.full
            garbled = client.post(
                "/api/v2/upscale",
                content=b"{not json" + b"x" * 300_000,
                headers={"Content-Type": "application/json"},
            )
            account = client.get("/api/v2/account")
            gate.set()
            assert first.result(120).status_code == 200
            after = client.post("/api/v2/convert", json=body)
        assert garbled.status_code == 503, garbled.text
        assert "nothing was charged" in garbled.json()["detail"]
        assert int(garbled.headers["Retry-After"]) >= 1
        assert account.status_code == 200
        assert after.status_code == 200, after.text
        assert balance_of(res, acct.id) == CREDITS - 2
        assert ledger_consistent(res, acct.id)
        assert held_reservations(res, acct.id) == 0
    finally:
        res.close()


def test_when_full_process_and_direct_cpu_routes_answer_503(
    database_url: str, tmp_path: Path
) -> None:
    """The routes that do CPU work outside the pipeline (here a public model's image, drawn
    in the CPU pool) wait for a place like any image call, and ``/api/process`` is refused
    before its multipart body is parsed; once the place is free both work."""
    settings = make_settings(database_url, tmp_path / "data", cpu_workers=1, max_queued_requests=0)
    res = wire(build_resources(settings))
    try:
        acct = make_account(res, credits=CREDITS)
        gate = threading.Event()
        slow = SlowConvert(gate)
        res.pipeline.engines = {**res.pipeline.engines, "convert": slow}
        body = {"image_base64": base64.b64encode(png_bytes(40, 30)).decode()}
        model_id = gallery.gallery()[0].id
        with _serve(res, acct.key_headers) as client, ThreadPoolExecutor(1) as pool:
            first = pool.submit(client.post, "/api/v2/convert", json=body)
            assert slow.started.wait(60)
            drawn_while_full = client.get(f"/api/v2/avatars/public/{model_id}.png")
            garbled = client.post(
                "/api/process",
                content=b"--not-a-boundary\r\n" + b"x" * 200_000,
                headers={"Content-Type": "multipart/form-data; boundary=zzz"},
            )
            gate.set()
            assert first.result(120).status_code == 200
            drawn_after = client.get(f"/api/v2/avatars/public/{model_id}.png")
        for refused in (drawn_while_full, garbled):
            assert refused.status_code == 503, refused.text
            assert int(refused.headers["Retry-After"]) >= 1
        assert drawn_after.status_code == 200
        assert drawn_after.content.startswith(b"\x89PNG")
        assert balance_of(res, acct.id) == CREDITS - 1
        assert ledger_consistent(res, acct.id)
        assert held_reservations(res, acct.id) == 0
    finally:
        res.close()


def test_on_idle_waits_until_the_process_stays_idle() -> None:
    """Requests that follow each other closely keep their memory: ``on_idle`` (the trim) runs
    once, after the last of them, not after each."""

    async def scenario() -> tuple[list[float], float]:
        calls: list[float] = []
        gate = Admission(1, 0, 30, on_idle=lambda: calls.append(time.monotonic()), idle_delay_s=2)
        for _ in range(5):
            async with gate.slot():
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.02)
        ended = time.monotonic()
        assert calls == []  # five idle moments, each shorter than the delay
        for _ in range(100):
            if calls:
                break
            await asyncio.sleep(0.1)
        return calls, ended

    calls, ended = asyncio.run(scenario())
    assert len(calls) == 1
    assert calls[0] - ended >= 1.9
