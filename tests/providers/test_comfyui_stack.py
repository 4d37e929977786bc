"""The compose ``comfyui`` profile (deploy/compose.yaml, deploy/comfyui/): ComfyUI built at the
commit the workflows were validated against, its model files put in place by the one-shot before
it starts, and ``PIXELMILL_BACKEND_PROFILE=comfyui`` in ``.env`` routing the api and workers to
it. Containers cannot run here: the files are checked as Compose and the Dockerfile read them,
the routes are built from the api service's own environment, and the one-shot's command runs
for real (test_comfyui_models.py; ComfyUI's own command in test_comfyui_validate.py)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from pixelmill.config import Settings
from pixelmill.engines.registry import PROFILES, build_engines
from pixelmill.engines.runtime.hosted import HostedEngine
from pixelmill.resources import route_engines
from tests.deploy.files import DEPLOY, load_compose, read_dockerfile, service_environment
from tests.deploy.test_setting_names import filled_env

DOCKERFILE = DEPLOY / "comfyui" / "Dockerfile"
OBJECT_INFO = Path(__file__).with_name("data") / "comfyui_object_info.json"


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    found: dict[str, Any] = load_compose(filled_env())["services"]
    return found


def test_the_profile_builds_comfyui_from_deploy_comfyui(services: dict[str, Any]) -> None:
    server, models = services["comfyui"], services["comfyui-models"]
    for service in (server, models):
        assert service["profiles"] == ["comfyui"]
        assert service["build"]["context"] == "./comfyui"
        assert service["image"] == "pixelmill-comfyui:latest"
    assert (DEPLOY / server["build"]["context"] / "Dockerfile") == DOCKERFILE
    # The one-shot fills the volume ComfyUI reads its models from, and finishes first.
    assert models["entrypoint"] == ["python3", "/opt/pixelmill/fetch-models", "--models", "/models"]
    assert models["restart"] == "no"
    assert "comfyui_models:/models" in models["volumes"]
    assert "comfyui_models:/opt/comfyui/models" in server["volumes"]
    assert server["depends_on"] == {
        "comfyui-models": {"condition": "service_completed_successfully"}
    }
    assert "ports" not in server  # reached by the api and workers only
    # No other service waits for it: a stack without the profile starts as before.
    for name, service in services.items():
        if name not in ("comfyui", "comfyui-models"):
            assert "comfyui" not in service.get("depends_on", {}), name


def test_the_image_is_pinned_to_the_validated_commit_and_torch() -> None:
    about = json.loads(OBJECT_INFO.read_text())["about"]
    final = read_dockerfile(DOCKERFILE).final
    stage_args = dict(arg.partition("=")[::2] for arg in final.all("ARG"))
    assert stage_args["COMFYUI_COMMIT"] == about["commit"]
    assert about["pytorch_version"].split("+")[0] == stage_args["TORCH_VERSION"]
    runs = " ".join(final.all("RUN"))
    assert 'test "$(git -C /opt/comfyui rev-parse HEAD)" = "$COMFYUI_COMMIT"' in runs
    assert "fetch-models models.json /opt/pixelmill/" in final.all("COPY")
    assert final.exec_form("ENTRYPOINT")[:2] == ["python3", "main.py"]
    assert "/system_stats" in " ".join(final.healthcheck())


def test_the_default_arguments_are_comfyuis_own(services: dict[str, Any]) -> None:
    command = services["comfyui"]["command"]
    words = shlex.split(command) if isinstance(command, str) else command
    assert words == ["--preview-method", "none"]


def test_the_comfyui_backend_profile_routes_the_api_to_the_service(
    services: dict[str, Any], tmp_path: Path
) -> None:
    env = service_environment(services["api"])
    assert env["PIXELMILL_BACKEND_PROFILE"] == "offline"  # the .env.example default
    assert env["PIXELMILL_COMFYUI_URL"] == "http://comfyui:8188"
    compose = load_compose({**filled_env(), "PIXELMILL_BACKEND_PROFILE": "comfyui"})
    env = service_environment(compose["services"]["worker"])
    values = {
        key.removeprefix("PIXELMILL_").lower(): value
        for key, value in env.items()
        if key.startswith("PIXELMILL_") and value != ""
    }
    settings = Settings.model_validate({**values, "data_dir": tmp_path})
    engines, backends = route_engines(build_engines(), settings)
    assert backends is not None and backends.comfyui is not None
    try:
        assert str(backends.comfyui.http.url("prompt")) == "http://comfyui:8188/prompt"
        routed = {
            op: engine.route.label
            for op, engine in engines.items()
            if isinstance(engine, HostedEngine)
        }
        assert routed == PROFILES["comfyui"]
    finally:
        backends.close()
