"""Cancellation reaching the provider. The adapters: a token cancelled through a parent, an
OpenAI request aborted in flight (the server sees the connection close), a ComfyUI prompt
interrupted only when it is the one running. Through the live app: a storefront job whose
routed call is running is cancelled (``PATCH .../enrichment-jobs/{id}`` ``status=failed``), the
runner notices within about a second, the provider sees the cancel (Replicate
``POST /v1/predictions/{id}/cancel``; ComfyUI queue delete + interrupt; OpenAI: the connection
closed), no offline fallback runs,
the job ends ``failed`` with the cancel's message and its credits come back."""

from __future__ import annotations

import base64
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from pixelmill.cancel import CancelToken, cancel_scope, cancelled_by, scoped_cancel
from pixelmill.engines.analyze.hosted import VisionAnalysis
from pixelmill.providers.comfyui import ComfyUIProvider
from pixelmill.providers.http import Cancelled, HttpPolicy
from pixelmill.providers.openai import OpenAIProvider
from pixelmill.resources import Resources
from tests.providers.conftest import RoutedApp
from tests.providers.fakes import Fake, output_png, serve
from tests.storefront.helpers import COLOURS, JOBS, SHOP, png
from tests.support.accounts import Account, make_account
from tests.support.credits import consistent_balance
from tests.support.waiting import drain_jobs, wait_until

FAST = HttpPolicy(timeout=20.0, max_attempts=2, concurrency=2, backoff_base=0.01, backoff_max=0.05)


def test_a_call_token_is_cancelled_by_the_process_or_the_job() -> None:
    process, job = CancelToken(), CancelToken()
    with cancel_scope(job):
        call = scoped_cancel(process)
    outside = scoped_cancel(process)  # no job scope here
    fired: list[str] = []
    with call.on_cancel(lambda: fired.append("call")):
        assert not call.cancelled
        job.cancel()
        assert call.cancelled and fired == ["call"]
        job.cancel()  # once
        assert fired == ["call"]
    assert not outside.cancelled
    process.cancel()
    assert outside.cancelled
    # A callback registered on an already cancelled token runs at once; none stays behind.
    with call.on_cancel(lambda: fired.append("late")):
        pass
    assert fired == ["call", "late"]
    assert cancelled_by(RuntimeError("x")) is False
    wrapped = ValueError("wrapped")
    wrapped.__cause__ = Cancelled("openai")
    assert cancelled_by(wrapped)


def test_an_openai_request_in_flight_is_aborted() -> None:
    with serve("openai") as fake:
        fake.mode = "stall"
        openai = OpenAIProvider(f"{fake.url}/v1", "sk-x", FAST)
        cancel = CancelToken()
        threading.Timer(0.5, cancel.cancel).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            openai.chat_json("m", "You describe images", "hi", VisionAnalysis, cancel=cancel)
        took = time.monotonic() - started
        openai.close()
        # The server saw the connection close (it would otherwise stall 30 s).
        wait_until(lambda: fake.counters.get("disconnected") == 1, timeout=5)
    assert 0.4 < took < 2.0, took
    assert fake.paths() == ["POST /v1/chat/completions"]  # not retried


@pytest.mark.parametrize("running", [True, False])
def test_comfyui_interrupts_only_its_own_running_prompt(tmp_path: Path, running: bool) -> None:
    (tmp_path / "w.json").write_text(json.dumps({"1": {"inputs": {"image": "{{image}}"}}}))
    with serve("comfyui") as fake:
        fake.running = running
        comfy = ComfyUIProvider(fake.url, tmp_path, FAST, poll_interval=0.3)
        cancel = CancelToken()

        def cancel_once_queued() -> None:
            wait_until(lambda: "GET /history/pr-1" in fake.paths(), timeout=10, interval=0.01)
            cancel.cancel()

        threading.Thread(target=cancel_once_queued, daemon=True).start()
        with pytest.raises(Cancelled):
            comfy.run("w.json", {"image": output_png()}, {}, cancel)
        comfy.close()
    after = fake.paths()[fake.paths().index("POST /queue") :]
    assert next(s for s in fake.seen if s.path == "/queue").json == {"delete": ["pr-1"]}
    if running:
        assert after == ["POST /queue", "GET /queue", "POST /interrupt"]
        assert fake.seen[-1].json == {"prompt_id": "pr-1"}
    else:
        # Still queued: deleting it was enough; an /interrupt would stop someone else's prompt.
        assert after == ["POST /queue", "GET /queue"]


# ---- through the live app: cancelling a storefront job -----------------------------------------


def _start_job(client: TestClient, acct: Account, body: dict[str, Any]) -> int:
    r = client.post(JOBS, json={"shop_domain": SHOP, **body}, headers=acct.key_headers)
    assert r.status_code == 200, r.text
    number: int = r.json()["job_id"]
    return number


def _product() -> dict[str, Any]:
    image = base64.b64encode(png(COLOURS["blue"])).decode()
    return {"id": "mug", "title": "Blue Mug", "image_base64": image}


def _cancel(client: TestClient, acct: Account, number: int) -> float:
    r = client.patch(
        f"{JOBS}/{number}",
        params={"status": "failed", "error_message": "stopped by the merchant"},
        headers=acct.key_headers,
    )
    assert r.status_code == 200, r.text
    return time.monotonic()


def _ended_cancelled(client: TestClient, acct: Account, number: int) -> dict[str, Any]:
    body: dict[str, Any] = client.get(f"{JOBS}/{number}", headers=acct.key_headers).json()
    assert body["status"] == "failed", body
    assert body["error_message"] == "stopped by the merchant"
    assert body["credits_used"] == 0
    return body


def _saw(fake: Fake, what: str) -> bool:
    return what in fake.paths()


def test_cancelling_a_job_cancels_its_replicate_prediction(routed_app: RoutedApp) -> None:
    with (
        serve("replicate") as fake,
        routed_app(
            routes={"background_removal": "replicate:owner/rembg:v1"},
            replicate_base_url=fake.url,
            replicate_api_token="r8_x",
            job_workers=1,
            analyze_products=False,
            provider_timeout_seconds=20.0,
        ) as (client, res),
    ):
        fake.mode = "hang"  # the prediction never ends by itself
        acct = make_account(res, credits=5)
        number = _start_job(
            client,
            acct,
            {
                "products": [_product()],
                "enrichments": ["images"],
                "image_operations": [{"operation": "remove_background"}],
            },
        )
        wait_until(lambda: _saw(fake, "GET /v1/predictions/p1"), timeout=60, interval=0.05)
        assert consistent_balance_held(res, acct) == 4  # 1 held
        cancelled_at = _cancel(client, acct, number)
        wait_until(lambda: _saw(fake, "POST /v1/predictions/p1/cancel"), timeout=10, interval=0.05)
        latency = time.monotonic() - cancelled_at
        body = _ended_cancelled(client, acct, number)
        (product,) = body["results"]
        assert product["images"] == []  # no offline fallback ran for the cancelled call
        drain_jobs(res)  # the run has stopped: nothing more reaches the provider
        seen = len(fake.seen)
        time.sleep(1.0)  # one Replicate poll interval: a poller left running would ask again
        assert len(fake.seen) == seen
        assert consistent_balance(res, acct.id) == 5
    print(f"cancel -> POST /v1/predictions/p1/cancel: {latency:.2f} s")
    assert latency < 5.0
    creates = [s for s in fake.seen if s.path == "/v1/predictions"]
    assert len(creates) == 1 and creates[0].json["version"] == "v1"
    assert set(creates[0].json["input"]) == {"image"}
    assert fake.paths().count("POST /v1/predictions/p1/cancel") == 1


def test_cancelling_a_job_stops_its_comfyui_prompt(routed_app: RoutedApp, tmp_path: Path) -> None:
    workflows = tmp_path / "workflows"
    workflows.mkdir()
    (workflows / "rembg.json").write_text(
        json.dumps({"1": {"class_type": "LoadImage", "inputs": {"image": "{{image}}"}}})
    )
    with (
        serve("comfyui") as fake,
        routed_app(
            routes={"background_removal": "comfyui:rembg.json"},
            comfyui_url=fake.url,
            comfyui_workflows=workflows,
            job_workers=1,
            analyze_products=False,
        ) as (client, res),
    ):
        fake.mode = "hang"  # the prompt never finishes
        acct = make_account(res, credits=5)
        number = _start_job(
            client,
            acct,
            {
                "products": [_product()],
                "enrichments": ["images"],
                "image_operations": [{"operation": "remove_background"}],
            },
        )
        wait_until(lambda: _saw(fake, "GET /history/pr-1"), timeout=60, interval=0.05)
        cancelled_at = _cancel(client, acct, number)
        wait_until(lambda: _saw(fake, "POST /interrupt"), timeout=10, interval=0.05)
        latency = time.monotonic() - cancelled_at
        (product,) = _ended_cancelled(client, acct, number)["results"]
        assert product["images"] == []
        assert consistent_balance(res, acct.id) == 5
    print(f"cancel -> POST /interrupt at ComfyUI: {latency:.2f} s")
    assert latency < 5.0
    after = fake.paths()[fake.paths().index("POST /queue") :]
    assert after == ["POST /queue", "GET /queue", "POST /interrupt"]
    assert fake.seen[-1].json == {"prompt_id": "pr-1"}


def test_cancelling_a_job_aborts_its_openai_request(routed_app: RoutedApp) -> None:
    with (
        serve("openai") as fake,
        routed_app(
            routes={"product_text": "openai:gpt-4o-mini"},
            openai_base_url=f"{fake.url}/v1",
            job_workers=1,
            analyze_products=False,
            provider_timeout_seconds=20.0,
        ) as (client, res),
    ):
        fake.mode = "stall"
        acct = make_account(res, credits=5)
        number = _start_job(
            client, acct, {"products": [_product()], "enrichments": ["description", "tags"]}
        )
        wait_until(lambda: _saw(fake, "POST /v1/chat/completions"), timeout=60, interval=0.05)
        assert consistent_balance_held(res, acct) == 3  # 2 held
        cancelled_at = _cancel(client, acct, number)
        wait_until(lambda: fake.counters.get("disconnected") == 1, timeout=10, interval=0.05)
        latency = time.monotonic() - cancelled_at
        body = _ended_cancelled(client, acct, number)
        (product,) = body["results"]
        # Neither the model's text nor an offline fallback's was written.
        assert product.get("description") is None and product.get("tags") is None
        assert consistent_balance(res, acct.id) == 5
    print(f"cancel -> connection closed at the OpenAI server: {latency:.2f} s")
    assert latency < 5.0
    assert fake.paths() == ["POST /v1/chat/completions"]


def consistent_balance_held(res: Resources, acct: Account) -> int:
    """The balance while the job holds its reservation (balance == sum(ledger) still)."""
    from pixelmill.credits import ledger

    with res.db.read() as session:
        balance = ledger.balance(session, acct.id)
        assert balance == ledger.ledger_sum(session, acct.id)
    return balance
