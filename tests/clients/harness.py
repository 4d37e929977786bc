"""Run the real PyPI clients (``pixelpanda`` SDK, ``pixelpanda-mcp``) in their own venv
(``.venv-clients``, made by ``scripts/bootstrap --dev``) against a live server."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.support.services import IN_CI

CLIENT_PY = Path(__file__).resolve().parents[2] / ".venv-clients" / "bin" / "python"


def require_clients() -> None:
    if not CLIENT_PY.exists():
        message = f"the client venv is missing ({CLIENT_PY}); run scripts/bootstrap --dev"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)


def run_client(script: str, env: dict[str, str] | None = None, timeout: float = 300) -> Any:
    """Run ``script`` with the clients' Python; it must print one JSON document last."""
    require_clients()
    proc = subprocess.run(
        [str(CLIENT_PY), "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )
    assert proc.returncode == 0, f"client failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])
