"""Fuzzing the published OpenAPI document with schemathesis against a live server.

Every operation of ``/.well-known/openapi.json`` gets the examples, coverage (boundary and
invalid values), fuzzing and stateful phases, authenticated with an API key (the JWT-only
operations with a second account's login token, so regenerating that key cannot lock the run
out). The run must find no server error and no response that breaks what the document says
(status code's schema, content type, headers). Examples per operation are bounded and the
seed is fixed so a run is repeatable; ``PIXELMILL_FUZZ_SEED`` and ``PIXELMILL_FUZZ_EXAMPLES``
explore further (e.g. ``PIXELMILL_FUZZ_SEED=$RANDOM``). The run is bounded by time as well:
after ``PIXELMILL_FUZZ_SECONDS`` (default 60) it is interrupted as Ctrl-C would, and what it
tested up to then is judged (schemathesis's own ``--max-time`` is a budget it always spends).
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from pixelmill.app import OPENAPI_URL
from tests.support.accounts import make_account
from tests.support.images import png_bytes
from tests.support.servers import live_server

ST = Path(sys.executable).parent / "st"
CHECKS = (
    "not_a_server_error",
    "response_schema_conformance",
    "content_type_conformance",
    "response_headers_conformance",
)
INTERRUPTED = (
    130  # schemathesis's exit code after Ctrl-C when nothing failed (ExitCode.INTERRUPTED)
)
# Operations that accept a login token (JWT) only.
JWT_ONLY = ("/api/credits/balance", "/api/auth/regenerate-token")

CONFIG = """\
headers = {{ Authorization = "Bearer ${{PM_FUZZ_KEY}}" }}

[generation]
database = "none"

[[operations]]
include-path-regex = "^({jwt_only})$"
headers = {{ Authorization = "Bearer ${{PM_FUZZ_JWT}}" }}
"""


def _login_token(base: str, email: str, password: str) -> str:
    r = httpx.post(
        f"{base}/api/auth/login", data={"username": email, "password": password}, timeout=30
    )
    assert r.status_code == 200, r.text
    token: str = r.json()["access_token"]
    return token


@pytest.mark.slow
def test_schemathesis_finds_no_server_error_and_no_schema_violation(
    app: FastAPI, tmp_path: Path
) -> None:
    if not ST.exists():
        pytest.fail(f"schemathesis is not installed ({ST}); run scripts/bootstrap --dev")
    resources = app.state.resources
    keyed = make_account(resources, credits=1000, plan="enterprise", tag="fuzz")
    other = make_account(resources, credits=10, plan="enterprise", tag="fuzz-jwt")
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG.format(jwt_only="|".join(JWT_ONLY)))
    with live_server(app) as base:
        env = {
            **os.environ,
            "PM_FUZZ_KEY": keyed.api_key,
            "PM_FUZZ_JWT": _login_token(base, other.email, other.password),
        }
        proc = subprocess.Popen(
            [
                str(ST),
                "--no-color",
                "--config-file",
                str(config),
                "run",
                f"{base}{OPENAPI_URL}",
                "--checks",
                ",".join(CHECKS),
                "--max-examples",
                os.environ.get("PIXELMILL_FUZZ_EXAMPLES", "10"),
                "--seed",
                os.environ.get("PIXELMILL_FUZZ_SEED", "20261123"),
                "--workers",
                "1",
                "--request-timeout",
                "60",
                "--report",
                "json",
                "--report-json-path",
                str(tmp_path / "report.json"),
            ],
            cwd=tmp_path,  # where schemathesis keeps its replay files
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            out, _ = proc.communicate(timeout=float(os.environ.get("PIXELMILL_FUZZ_SECONDS", "60")))
            interrupted = False
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)  # it stops, reports what it ran, and exits
            out, _ = proc.communicate(timeout=120)
            interrupted = True
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["test_cases"]["generated"] > 0, out[-20000:]
    assert report["failures"] == [] and report["errors"] == [], out[-20000:]
    assert report["test_cases"]["with_failures"] == 0, out[-20000:]
    if interrupted:  # a run cut short by the time bound: what it ran is judged above
        assert proc.returncode == INTERRUPTED and report["stop_reason"] == "interrupted", out
    else:
        assert proc.returncode == 0, out[-20000:]


def test_a_422_with_one_message_matches_the_document(app: FastAPI) -> None:
    """The first finding of the fuzz run: a 422 of a well-formed request that cannot be done
    carries one message, and the document must allow it beside the list of field errors."""
    with TestClient(app) as client:
        acct = make_account(app.state.resources, credits=5)
        tiny = base64.b64encode(png_bytes(2, 2)).decode()  # decodes, but too small to cut out
        r = client.post(
            "/api/v2/remove-background", json={"image_base64": tiny}, headers=acct.key_headers
        )
        assert r.status_code == 422 and isinstance(r.json()["detail"], str)
        doc = client.get(OPENAPI_URL).json()
    detail = doc["components"]["schemas"]["HTTPValidationError"]["properties"]["detail"]
    assert {"type": "string"} in detail["anyOf"]
    assert {"type": "array", "items": {"$ref": "#/components/schemas/ValidationError"}} in detail[
        "anyOf"
    ]
    ref = doc["paths"]["/api/v2/remove-background"]["post"]["responses"]["422"]["content"]
    assert ref["application/json"]["schema"] == {"$ref": "#/components/schemas/HTTPValidationError"}
