"""``scripts/validate-comfyui`` against a real ComfyUI: it starts ComfyUI's own server from its
source on the CPU and every shipped workflow, filled as the adapter fills it, must be accepted by
its ``POST /prompt``. ComfyUI and torch are an optional external tool (a few GB, not in the
project's requirements), so this test runs only where an operator or developer has them:
``PIXELMILL_TEST_COMFYUI_DIR`` (ComfyUI's source tree) and ``PIXELMILL_TEST_COMFYUI_PYTHON``
(a Python with its requirements); it is skipped otherwise, also under ``CI=true``, where a
missing optional tool is not a failure (docs/backends.md). The offline half, the workflows
against the kept ``/object_info``, runs everywhere (test_comfyui_object_info.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from pixelmill.providers.comfyui import SHIPPED
from tests.deploy.files import DEPLOY, load_compose, read_dockerfile
from tests.deploy.test_setting_names import filled_env
from tests.multinode.cluster import free_port

ROOT = Path(__file__).resolve().parents[2]
COMFYUI = os.environ.get("PIXELMILL_TEST_COMFYUI_DIR", "")
PYTHON = os.environ.get("PIXELMILL_TEST_COMFYUI_PYTHON", "")


def _missing() -> str | None:
    if not COMFYUI or not (Path(COMFYUI) / "main.py").is_file():
        return "ComfyUI's source is not here (PIXELMILL_TEST_COMFYUI_DIR)"
    if not PYTHON or not Path(PYTHON).is_file():
        return "no Python with ComfyUI's requirements (PIXELMILL_TEST_COMFYUI_PYTHON)"
    probe = subprocess.run([PYTHON, "-c", "import torch"], capture_output=True, check=False)
    if probe.returncode != 0:
        return f"torch is not installed for {PYTHON}"
    return None


@pytest.mark.slow
def test_a_real_comfyui_accepts_every_shipped_workflow(tmp_path: Path) -> None:
    missing = _missing()
    if missing is not None:
        pytest.skip(missing)
    saved = tmp_path / "object_info.json"
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "validate-comfyui"),
            "--comfyui",
            COMFYUI,
            "--python",
            PYTHON,
            "--save-object-info",
            str(saved),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    shipped = sorted(p.name for p in SHIPPED.glob("*.json"))
    for name in shipped:
        assert f"\n{name}: ok\n  /prompt: HTTP 200: accepted" in run.stdout, name
    assert f"{len(shipped)} of {len(shipped)} workflows accepted" in run.stdout
    assert '"TextEncodeQwenImageEditPlus"' in saved.read_text()


@pytest.mark.slow
def test_the_images_command_starts_comfyui_and_passes_its_healthcheck(tmp_path: Path) -> None:
    """deploy/comfyui/Dockerfile's ENTRYPOINT with compose's default command and ``--cpu``, run
    as a local process from the same source (``0.0.0.0`` becomes 127.0.0.1, the image's
    folders a temporary base directory), then the image's HEALTHCHECK command against it."""
    missing = _missing()
    if missing is not None:
        pytest.skip(missing)
    final = read_dockerfile(DEPLOY / "comfyui" / "Dockerfile").final
    entrypoint = final.exec_form("ENTRYPOINT")
    command = load_compose(filled_env())["services"]["comfyui"]["command"]
    port = free_port()
    argv = [PYTHON if word == "python3" else word for word in entrypoint]
    argv = [{"0.0.0.0": "127.0.0.1", "8188": str(port)}.get(w, w) for w in argv]
    for sub in ("custom_nodes", "input", "output", "temp", "user", "models"):
        (tmp_path / sub).mkdir()
    argv += [*command.split(), "--cpu", "--base-directory", str(tmp_path)]
    argv += ["--database-url", "sqlite:///:memory:"]
    health = [PYTHON if w == "python3" else w for w in final.healthcheck()]
    health = [w.replace("127.0.0.1:8188", f"127.0.0.1:{port}") for w in health]
    log = (tmp_path / "comfyui.log").open("wb")
    proc = subprocess.Popen(argv, cwd=COMFYUI, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while subprocess.run(health, capture_output=True, check=False).returncode != 0:
            assert proc.poll() is None, (tmp_path / "comfyui.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "no healthy ComfyUI within 180 s"
            time.sleep(2)
        stats = httpx.get(f"http://127.0.0.1:{port}/system_stats", timeout=10).json()
        assert "--preview-method" in stats["system"]["argv"]
        assert stats["devices"][0]["type"] == "cpu"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
