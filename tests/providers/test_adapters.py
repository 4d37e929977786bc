"""The adapters on their own against the fake servers: ``Retry-After`` honoured on a 429,
cancellation reaching the provider (Replicate ``/cancel``, ComfyUI queue delete + interrupt),
the concurrency cap, outputs fetched only from the provider's hosts, and route parsing."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from pixelmill.cancel import CancelToken
from pixelmill.config import Settings
from pixelmill.engines.analyze.hosted import VisionAnalysis
from pixelmill.engines.registry import build_engines
from pixelmill.providers.comfyui import ComfyUIProvider, substitute
from pixelmill.providers.http import (
    Cancelled,
    HttpPolicy,
    ProviderFailure,
    ProviderHttp,
    retry_after_seconds,
)
from pixelmill.providers.openai import OpenAIProvider
from pixelmill.providers.replicate import ReplicateProvider
from pixelmill.resources import route_engines
from tests.providers.fakes import output_png, serve

FAST = HttpPolicy(timeout=2.0, max_attempts=3, concurrency=2, backoff_base=0.01, backoff_max=0.05)


def test_a_429_is_retried_after_its_retry_after() -> None:
    with serve("openai") as fake:
        fake.mode = "429"
        openai = OpenAIProvider(f"{fake.url}/v1", "sk-x", FAST)
        try:
            answer = openai.chat_json(
                "m", "You describe images", "hi", VisionAnalysis, image_png=output_png()
            )
        finally:
            openai.close()
    assert answer.objects == ["ginger cat", "blue cushion"]
    assert fake.paths() == ["POST /v1/chat/completions"] * 2


def test_retry_after_forms() -> None:
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds("Thu, 01 Jan 2099 00:00:10 GMT", now=4070908800.0) == 10.0


def test_replicate_cancellation_cancels_the_prediction() -> None:
    with serve("replicate") as fake:
        fake.mode = "hang"
        replicate = ReplicateProvider(fake.url, "r8_x", FAST, poll_interval=0.05)
        cancel = CancelToken()
        threading.Timer(0.4, cancel.cancel).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            replicate.run("owner/model", {"prompt": "x"}, cancel)
        replicate.close()
        assert time.monotonic() - started < 2.0
    # An official model (no version) goes to the model's predictions endpoint.
    assert fake.paths()[0] == "POST /v1/models/owner/model/predictions"
    assert fake.seen[0].json == {"input": {"prompt": "x"}}
    assert fake.paths()[-1] == "POST /v1/predictions/p1/cancel"


def test_replicate_run_deadline_cancels_too() -> None:
    with serve("replicate") as fake:
        fake.mode = "hang"
        replicate = ReplicateProvider(fake.url, "r8_x", FAST, poll_interval=0.05, run_timeout=0.3)
        with pytest.raises(ProviderFailure, match="did not end within"):
            replicate.run("owner/model:v1", {})
        replicate.close()
    assert fake.paths()[-1] == "POST /v1/predictions/p1/cancel"


def test_comfyui_cancellation_deletes_and_interrupts(tmp_path: Path) -> None:
    (tmp_path / "w.json").write_text(json.dumps({"1": {"inputs": {"image": "{{image}}"}}}))
    with serve("comfyui") as fake:
        comfy = ComfyUIProvider(fake.url, tmp_path, FAST, poll_interval=0.2)
        cancel = CancelToken()
        threading.Timer(0.1, cancel.cancel).start()
        with pytest.raises(Cancelled):
            comfy.run("w.json", {"image": output_png()}, {}, cancel)
        comfy.close()
    assert "POST /queue" in fake.paths() and fake.paths()[-1] == "POST /interrupt"
    queue = next(s for s in fake.seen if s.path == "/queue")
    assert queue.json == {"delete": ["pr-1"]}


def test_comfyui_refuses_workflow_paths_outside_its_folder(tmp_path: Path) -> None:
    comfy = ComfyUIProvider("http://127.0.0.1:9", tmp_path, FAST)
    for name in ("../secrets.json", "/etc/passwd", "w.txt"):
        with pytest.raises(ValueError):
            comfy.workflow(name)
    comfy.close()


def test_placeholders_keep_types_and_fill_text() -> None:
    filled = substitute(
        {"a": "{{seed}}", "b": ["x {{prompt}} y", "{{unknown}}"], "c": 3},
        {"seed": 7, "prompt": "snow"},
    )
    assert filled == {"a": 7, "b": ["x snow y", "{{unknown}}"], "c": 3}


def test_outputs_only_from_the_provider_hosts() -> None:
    http = ProviderHttp(
        "replicate", "https://api.replicate.com", output_hosts=("replicate.delivery",)
    )
    assert http.allowed_output("https://api.replicate.com/v1/files/x")
    assert http.allowed_output("https://replicate.delivery/pbxt/abc/out.png")
    assert http.allowed_output("https://pbxt.replicate.delivery/abc/out.png")
    assert not http.allowed_output("http://replicate.delivery/abc/out.png")  # not https
    assert not http.allowed_output("https://evilreplicate.delivery/x.png")
    assert not http.allowed_output("http://169.254.169.254/latest/meta-data")
    assert not http.allowed_output("https://api.replicate.com:8443/x")
    assert not http.allowed_output("file:///etc/passwd")
    with pytest.raises(ProviderFailure, match="not the provider's"):
        http.fetch_output("http://127.0.0.1:1/x.png")
    assert http.fetch_output("data:image/png;base64,aGk=") == b"hi"
    http.close()


def test_the_concurrency_cap_holds_callers() -> None:
    http = ProviderHttp("openai", "http://127.0.0.1:9", policy=HttpPolicy(concurrency=1))
    cancel = CancelToken()
    with http.slot():
        threading.Timer(0.2, cancel.cancel).start()
        started = time.monotonic()
        with pytest.raises(Cancelled), http.slot(cancel):
            pass
        assert time.monotonic() - started >= 0.15
    with http.slot():  # released again
        pass
    http.close()


def test_no_route_leaves_the_registry_unchanged(tmp_path: Path) -> None:
    engines = build_engines()
    routed, backends = route_engines(engines, Settings(data_dir=tmp_path))
    assert backends is None
    assert routed == engines and all(routed[k] is engines[k] for k in engines)


def test_route_variables_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIXELMILL_ROUTE_IMAGE_TO_IMAGE", "openai:gpt-image-1")
    monkeypatch.setenv("PIXELMILL_PROVIDER_FALLBACK", "error")
    settings = Settings(data_dir=tmp_path)
    assert settings.routes == {"image_to_image": "openai:gpt-image-1"}
    routed, backends = route_engines(build_engines(), settings)
    assert backends is not None
    assert routed["image_to_image"].name == "edit"  # the offline engine's name and Params
    assert routed["image_to_image"].Params is routed["edit"].Params
    assert routed["edit"] is not routed["image_to_image"]
    backends.close()


@pytest.mark.parametrize(
    ("operation", "spec", "message"),
    [
        ("sharpen_all", "openai:x", "no operation named sharpen_all"),
        ("analyze", "replicate:a/b", "can be routed to openai, not replicate"),
        ("analyze", "gemini:pro", "provider one of openai, replicate, comfyui"),
        ("tryon", "openai:gpt-image-1", "can be routed to replicate, comfyui"),
        ("convert", "replicate:a/b", "convert cannot be routed"),
        ("upscale", "replicate:no-slash", "owner/model"),
    ],
)
def test_bad_routes_are_refused_at_startup(
    operation: str, spec: str, message: str, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path, routes={operation: spec})
    with pytest.raises(ValueError, match=message):
        route_engines(build_engines(), settings)


def test_a_provider_route_needs_its_settings(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, routes={"tryon": "replicate:a/b:v"})
    with pytest.raises(ValueError, match="PIXELMILL_REPLICATE_API_TOKEN"):
        route_engines(build_engines(), settings)
    settings = Settings(
        data_dir=tmp_path,
        routes={"edit": "comfyui:missing.json"},
        comfyui_url="http://127.0.0.1:8188",
        comfyui_workflows=tmp_path,
    )
    with pytest.raises(ValueError, match=r"no workflow missing\.json"):
        route_engines(build_engines(), settings)
