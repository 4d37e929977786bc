"""Structured logs from real traffic: one JSON object per line with the request's context, the
request id accepted or made and echoed, carried into the job's lines; and no secret (password,
API key, JWT, webhook secret, provider key) in any line at any level."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pixelmill.app import create_app
from pixelmill.observability.logs import JsonFormatter, configure_logging
from pixelmill.resources import build_resources
from pixelmill.worker import wire
from tests.providers.fakes import serve
from tests.support.accounts import make_account
from tests.support.api import b64_png, upload_product, wait_terminal
from tests.support.servers import client_for
from tests.support.settings import job_settings

PROVIDER_KEY = "sk-test-provider-key-0123456789abcdef"


@pytest.fixture
def json_logs(capsys: pytest.CaptureFixture[str]) -> Iterator[None]:
    """Logging as ``PIXELMILL_LOG_FORMAT=json`` at DEBUG sets it up (read what it wrote with
    :func:`lines`); the process's logging is put back afterwards."""
    configure_logging("json", "DEBUG")
    try:
        yield
    finally:
        root = logging.getLogger()
        for handler in [h for h in root.handlers if getattr(h, "pixelmill", False)]:
            root.removeHandler(handler)
        root.setLevel(logging.WARNING)
        logging.logThreads = logging.logProcesses = logging.logMultiprocessing = True
        logging.getLogger("uvicorn.access").disabled = False


def lines(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """Every line on stderr, each parsed as JSON (a line that is not JSON fails the test)."""
    return [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.strip()]


def test_json_lines_carry_the_request_and_the_job(
    json_logs: None, capsys: pytest.CaptureFixture[str], database_url: str, tmp_path: Path
) -> None:
    settings = job_settings(database_url, tmp_path / "data", log_format="json")
    res = wire(build_resources(settings))
    try:
        with client_for(create_app(settings, res)) as client:
            acct = make_account(res, credits=10)
            r = client.get(
                "/api/v2/account", headers={**acct.key_headers, "X-Request-ID": "rq-1.a"}
            )
            assert r.status_code == 200 and r.headers["x-request-id"] == "rq-1.a"
            for bad in ("x" * 65, "two words", "a<script>", 'q"uote'):
                r = client.get("/healthz", headers={"X-Request-ID": bad})
                echoed = r.headers["x-request-id"]
                assert echoed != bad and len(echoed) == 32  # a fresh id replaces it
            assert len(client.get("/healthz").headers["x-request-id"]) == 32
            product = upload_product(client, acct)
            r = client.post(
                "/api/v2/generate/scenes",
                json={"product_uuid": product["uuid"], "num_scenes": 1},
                headers={**acct.key_headers, "X-Request-ID": "rq-job"},
            )
            assert r.status_code == 202, r.text
            job_id = r.json()["job_id"]
            assert wait_terminal(client, acct, job_id, timeout=120)["status"] == "completed"
    finally:
        res.close()
    records = lines(capsys)
    assert records and all({"time", "level", "logger", "message"} <= set(r) for r in records)
    assert all(r["time"].endswith("Z") for r in records)
    access = [r for r in records if r["logger"] == "pixelmill.access"]
    first = next(r for r in access if r.get("request_id") == "rq-1.a")
    assert first["route"] == "/api/v2/account" and first["status"] == 200
    assert first["method"] == "GET" and first["account_id"] == acct.id
    assert isinstance(first["duration_ms"], float) and first["level"] == "INFO"
    job_lines = [r for r in records if r.get("job_id") == job_id]
    assert any(r["message"] == f"job {job_id} completed" for r in job_lines), job_lines
    assert all(r.get("request_id") == "rq-job" for r in job_lines)


def test_no_secret_reaches_any_log_line(
    json_logs: None,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    database_url: str,
    tmp_path: Path,
) -> None:
    caplog.set_level(logging.DEBUG)
    secrets: list[str] = [PROVIDER_KEY]
    password = "pw-never-logged-7f3a9c"
    with serve("openai") as fake:
        settings = job_settings(
            database_url,
            tmp_path / "data",
            log_format="json",
            routes={"analyze": "openai:gpt-4o-mini"},
            openai_base_url=f"{fake.url}/v1",
            openai_api_key=PROVIDER_KEY,
            provider_max_attempts=1,
        )
        res = wire(build_resources(settings))
        try:
            with client_for(create_app(settings, res)) as client:
                r = client.post(
                    "/api/auth/register", json={"email": "logs@example.com", "password": password}
                )
                assert r.status_code in (200, 201), r.text
                api_key = r.json()["api_key"]
                r = client.post(
                    "/api/auth/login", data={"username": "logs@example.com", "password": password}
                )
                jwt = r.json()["access_token"]
                bearer = {"Authorization": f"Bearer {api_key}"}
                assert client.get("/api/v2/account", headers=bearer).status_code == 200
                assert client.get("/api/auth/me", headers={"Authorization": f"Bearer {jwt}"})
                wrong_key = "pk_live_" + "w" * 40
                r = client.get("/api/v2/account", headers={"Authorization": f"Bearer {wrong_key}"})
                assert r.status_code == 401
                wrong_password = "pw-wrong-also-secret-1b2c"
                r = client.post(
                    "/api/auth/login",
                    data={"username": "logs@example.com", "password": wrong_password},
                )
                assert r.status_code == 401
                hook = client.post(
                    "/api/v2/webhooks", json={"url": f"{fake.url}/hook"}, headers=bearer
                )
                assert hook.status_code in (200, 201), hook.text
                webhook_secret = hook.json()["secret"]
                image = {"image_base64": b64_png(64, 48)}
                acct_key = make_account(res, credits=10).key_headers
                assert (
                    client.post("/api/v2/analyze", json=image, headers=acct_key).status_code == 200
                )
                fake.mode = "401"  # the provider rejects the key (and echoes part of it)
                r = client.post("/api/v2/analyze", json=image, headers=acct_key)
                assert r.status_code == 200  # the offline fallback, said in details
                fake.mode = "500"
                assert client.post("/api/v2/analyze", json=image, headers=acct_key)
                r = client.post(
                    "/api/auth/regenerate-token", headers={"Authorization": f"Bearer {jwt}"}
                )
                new_key = r.json()["api_key"]
        finally:
            res.close()
    secrets += [password, wrong_password, api_key, jwt, wrong_key, webhook_secret, new_key]
    # The provider's 401 echoes a masked key (tests/providers/fakes.py): its masked tail, not
    # the bare "6789", which a random hex request id can contain (one did on 2026-11-28).
    secrets += [api_key[8:], jwt.split(".")[2], PROVIDER_KEY[-12:], "*****6789"]
    written = capsys.readouterr().err
    assert "pixelmill.access" in written and '"level": "DEBUG"' in written
    formatted = [JsonFormatter().format(record) for record in caplog.records]
    formatted += [logging.Formatter("%(message)s %(args)s").format(r) for r in caplog.records]
    assert len(caplog.records) > 20
    for secret in secrets:
        assert secret not in written, secret
        assert not any(secret in line for line in formatted), secret


def test_json_time_is_the_records_own_across_seconds() -> None:
    """The JSON formatter formats the part up to the second once per second: each record still
    shows its own time, to the millisecond."""
    import json as _json
    import logging as _logging

    from pixelmill.observability.logs import JsonFormatter

    formatter = JsonFormatter()
    times = []
    for second, msecs in ((1_700_000_000, 123), (1_700_000_000, 987), (1_700_000_001, 4),
                          (1_699_999_999, 500)):  # fmt: skip
        record = _logging.LogRecord("t", _logging.INFO, __file__, 1, "m", None, None)
        record.created, record.msecs = second + msecs / 1000, msecs
        times.append(_json.loads(formatter.format(record))["time"])
    assert times == [
        "2023-11-14T22:13:20.123Z",
        "2023-11-14T22:13:20.987Z",
        "2023-11-14T22:13:21.004Z",
        "2023-11-14T22:13:19.500Z",
    ]
