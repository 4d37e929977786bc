"""The Python client against a live server (idempotent creates, errors carrying ``detail``,
uploads from path/bytes/URL, ``wait()`` with progress, the async client) and against tiny
local HTTP servers that script 429 / 503 answers and dropped connections (the retries)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from PIL import Image
from tests.support.credits import balance_of
from tests.support.images import decode, jpeg_bytes, png_bytes
from tests.support.servers import serve_bytes

from client_harness import Live
from pixelmill_client import (
    APIConnectionError,
    AsyncClient,
    AuthenticationError,
    BadRequest,
    Client,
    InsufficientCredits,
    NotFound,
    RateLimited,
    RetryPolicy,
)
from pixelmill_client import models as m

# ---- live server ------------------------------------------------------------------------------


@pytest.mark.both_databases
def test_same_idempotency_key_twice_creates_and_charges_once(live: Live) -> None:
    acct = live.account(credits=10)
    with Client(acct.api_key, live.url) as pm:
        product = pm.upload_product(png_bytes(200, 150), name="bottle")
        first = pm.generate_scenes(product.uuid, 3, idempotency_key="order-42")
        again = pm.generate_scenes(product.uuid, 3, idempotency_key="order-42")
        assert again.job_id == first.job_id
        assert pm.wait(first.job_id, interval=0.1).status == "completed"
        # A key the client generates is fresh per call: a second create is a second job.
        other = pm.generate_scenes(product.uuid, 1)
        assert other.job_id != first.job_id
        pm.wait(other.job_id, interval=0.1)
        assert [j.job_id for j in pm.list_jobs()] == [other.job_id, first.job_id]
    assert balance_of(live.resources, acct.id) == 10 - 3 - 1


def test_history_lists_jobs_and_grants_beside_calls(live: Live) -> None:
    acct = live.account(credits=10)
    with Client(acct.api_key, live.url) as pm:
        product = pm.upload_product(png_bytes(200, 150), name="bottle")
        job = pm.generate_scenes(product.uuid, 2)
        pm.wait(job.job_id, interval=0.1)
        page = pm.history(limit=10)
    assert [(i.kind, i.operation, i.credits, i.credits_used) for i in page.items] == [
        ("job", "scenes", -2, 2),
        ("grant", "grant", 10, 0),
    ]
    assert page.items[0].processing_id == job.job_id and page.total == 2


def test_errors_carry_status_code_and_detail(live: Live) -> None:
    acct = live.account(credits=0)
    with Client("pk_live_wrong", live.url) as bad, pytest.raises(AuthenticationError) as auth:
        bad.account()
    assert auth.value.status_code == 401
    assert auth.value.detail == "Invalid API key"
    with Client(acct.api_key, live.url) as pm:
        with pytest.raises(InsufficientCredits) as credits:
            pm.remove_background(jpeg_bytes(200, 150))
        assert credits.value.status_code == 402
        assert "credit" in credits.value.detail.lower()
        with pytest.raises(NotFound) as missing:
            pm.get_job("job_does_not_exist")
        assert missing.value.status_code == 404
        assert missing.value.detail
        with pytest.raises(BadRequest) as invalid:
            pm.upscale(jpeg_bytes(200, 150), scale=3)
        assert invalid.value.status_code == 422
        assert "scale" in invalid.value.detail
    assert balance_of(live.resources, acct.id) == 0


def test_uploads_from_path_bytes_and_url_and_downloads(live: Live, tmp_path: Path) -> None:
    acct = live.account(credits=10)
    path = tmp_path / "photo.jpg"
    path.write_bytes(jpeg_bytes(300, 200))
    served = png_bytes(180, 120)
    with (
        serve_bytes({"/shoe.png": (200, "image/png", served)}) as origin,
        Client(acct.api_key, live.url) as pm,
    ):
        from_path = pm.upscale(path, scale=2, quality="fast")
        from_bytes = pm.remove_background(path.read_bytes())
        from_url = pm.convert(f"{origin}/shoe.png", format="webp")
        # The library's upload takes base64 only: the client fetches a URL itself.
        product = pm.upload_product(f"{origin}/shoe.png", category="shoes")
        saved = pm.download(from_path.result_url or "", tmp_path / "out" / "big.png")
    assert decode(saved).size == (600, 400)
    assert Image.open(tmp_path / "out" / "big.png").size == (600, 400)
    assert from_path.method
    assert from_bytes.format == "png"
    assert from_url.format == "webp"
    assert from_url.details["original_width"] == 180
    assert product.filename == "shoe.png"
    assert (product.width, product.height) == (180, 120)
    assert acct.api_key not in json.dumps(product.model_dump(mode="json"))


def test_wait_reports_progress_and_models_keep_unknown_fields(live: Live) -> None:
    acct = live.account(credits=10)
    seen: list[m.Job] = []
    with Client(acct.api_key, live.url) as pm:
        job = pm.create_job(png_bytes(200, 150), images_to_generate=2)
        done = pm.wait(job.job_id, progress=seen.append, interval=0.05)
    assert done.status == "completed"
    assert len(done.results) == 2
    assert seen
    assert seen[-1] is done
    assert all(s.job_id == job.job_id for s in seen)
    # A field this client does not model is kept, not dropped.
    extra = m.Job.model_validate({**done.model_dump(), "new_field": 1})
    assert extra.model_extra is not None
    assert extra.model_extra["new_field"] == 1


def test_async_client(live: Live, tmp_path: Path) -> None:
    acct = live.account(credits=10)

    async def scenario() -> tuple[m.Account, list[m.ProcessingResult], m.Job, list[int]]:
        async with AsyncClient(acct.api_key, live.url) as pm:
            images = [jpeg_bytes(200 + 10 * i, 150) for i in range(3)]
            results = await asyncio.gather(*(pm.enhance(img) for img in images))
            totals: list[int] = []

            async def on_poll(job: m.Job) -> None:  # an async callback is awaited
                totals.append(job.progress.total)

            product = await pm.upload_product(png_bytes(200, 150))
            created = await pm.generate_scenes(product.uuid, 2)
            job = await pm.wait(created.job_id, progress=on_poll, interval=0.05)
            for i, r in enumerate(job.results):
                await pm.download(r.url, tmp_path / f"scene-{i}.jpg")
            return await pm.account(), list(results), job, totals

    account, results, job, totals = asyncio.run(scenario())
    assert [r.credits_used for r in results] == [1, 1, 1]
    assert all(r.result_url for r in results)
    assert job.status == "completed"
    assert totals[-1] == 2
    assert account.credits == 10 - 3 - 2
    assert len(list(tmp_path.glob("scene-*.jpg"))) == 2


# ---- scripted servers: retries ----------------------------------------------------------------


@dataclass
class Script:
    """Answers in order (status, headers, body); ``None`` drops the connection unanswered.
    Records when each request arrived and its headers."""

    answers: list[tuple[int, dict[str, str], bytes] | None]
    seen: list[tuple[float, str, dict[str, str]]] = field(default_factory=list)
    url: str = ""


@contextmanager
def scripted(answers: list[tuple[int, dict[str, str], bytes] | None]) -> Iterator[Script]:
    script = Script(list(answers))
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def handle_one(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            self.rfile.read(length)
            with lock:
                script.seen.append((time.monotonic(), self.command, dict(self.headers.items())))
                answer = script.answers.pop(0) if script.answers else (200, {}, b"{}")
            if answer is None:
                self.close_connection = True
                self.connection.close()
                return
            status, headers, body = answer
            self.send_response(status)
            for k, v in {"Content-Type": "application/json", **headers}.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_DELETE = handle_one  # noqa: N815

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    script.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield script
    finally:
        server.shutdown()
        server.server_close()


ACCOUNT = json.dumps({"id": 1, "email": "a@example.com", "credits": 5}).encode()
LIMITED = json.dumps({"detail": "Rate limit exceeded: 10 per 1 minute"}).encode()


def test_429_is_retried_after_the_servers_retry_after() -> None:
    with scripted([(429, {"Retry-After": "1"}, LIMITED), (200, {}, ACCOUNT)]) as s:
        started = time.monotonic()
        with Client("pk_live_x", s.url) as pm:
            account = pm.account()
    assert account.credits == 5
    assert len(s.seen) == 2
    gap = s.seen[1][0] - s.seen[0][0]
    assert 0.95 <= gap < 2.0, gap  # waited Retry-After, not the (shorter) backoff
    assert time.monotonic() - started < 3


def test_rate_limited_after_the_retries_carries_retry_after() -> None:
    answers: list[tuple[int, dict[str, str], bytes] | None] = [
        (429, {"Retry-After": "0"}, LIMITED)
    ] * 3
    with (
        scripted(answers) as s,
        Client("pk_live_x", s.url, retry=RetryPolicy(2)) as pm,
        pytest.raises(RateLimited) as exc,
    ):
        pm.account()
    assert len(s.seen) == 3  # the first try and 2 retries
    assert exc.value.status_code == 429
    assert exc.value.retry_after == 0
    assert exc.value.detail == "Rate limit exceeded: 10 per 1 minute"
    # A Retry-After longer than the policy accepts is not waited: raised at once.
    with (
        scripted([(429, {"Retry-After": "3600"}, LIMITED)]) as s2,
        Client("pk_live_x", s2.url) as pm2,
        pytest.raises(RateLimited),
    ):
        pm2.account()
    assert len(s2.seen) == 1


def test_503_and_dropped_connections_retry_a_create_with_the_same_idempotency_key() -> None:
    created = json.dumps({"job_id": "job_1", "status": "pending", "credits_reserved": 1}).encode()
    unavailable = json.dumps({"detail": "database unavailable"}).encode()
    answers: list[tuple[int, dict[str, str], bytes] | None] = [
        (503, {}, unavailable),
        None,
        (202, {}, created),
    ]
    with (
        scripted(answers) as s,
        Client("pk_live_x", s.url, retry=RetryPolicy(3, backoff=0.01)) as pm,
    ):
        job = pm.generate_scenes("product-uuid", 1)
    assert job.job_id == "job_1"
    keys = [headers.get("Idempotency-Key") for _, _, headers in s.seen]
    assert len(keys) == 3
    assert keys[0]
    assert keys[0].startswith("pmc-")
    assert len(set(keys)) == 1  # the one key, reused by every retry
    assert all(h["Authorization"] == "Bearer pk_live_x" for _, _, h in s.seen)


def test_a_lost_answer_to_a_processing_call_is_not_replayed() -> None:
    """A synchronous operation has no Idempotency-Key: repeating it after a lost answer could
    charge twice, so the client raises instead."""
    with (
        scripted([None, (200, {}, b"{}")]) as s,
        Client("pk_live_x", s.url, retry=RetryPolicy(3, backoff=0.01)) as pm,
        pytest.raises(APIConnectionError) as exc,
    ):
        pm.remove_background(b"\x89PNG...")
    assert len(s.seen) == 1
    assert exc.value.status_code is None
    assert "Idempotency-Key" not in s.seen[0][2]


def test_nothing_listening_is_a_connection_error_after_the_retries() -> None:
    started = time.monotonic()
    with (
        Client("pk_live_x", "http://127.0.0.1:9", retry=RetryPolicy(2, backoff=0.05)) as pm,
        pytest.raises(APIConnectionError) as exc,
    ):
        pm.account()
    assert "ConnectError" in exc.value.detail
    assert time.monotonic() - started < 2
