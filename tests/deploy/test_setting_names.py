"""Issue #45: every ``PIXELMILL_*`` name the deployment files set is a real setting, and every
one the documentation names is read by some code, so a documented or configured variable can
never silently do nothing (``docs/deploy.md`` once named ``PIXELMILL_CPU_THREADS``)."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from pixelmill.config import Settings
from tests.deploy.files import (
    COMPOSE,
    DEPLOY,
    DOCKERFILE,
    ENV_EXAMPLE,
    ROOT,
    load_compose,
    read_dockerfile,
    read_env_file,
    referenced_variables,
    service_environment,
)
from tests.deploy.names import is_setting, names_in, read_by_code

DOCS = sorted((ROOT / "docs").glob("*.md"))
CODE_FOLDERS = [ROOT / "src", ROOT / "clients" / "python" / "src", ROOT / "tests", ROOT / "bench"]


def deploy_files() -> list[Path]:
    return sorted(p for p in DEPLOY.rglob("*") if p.is_file())


def filled_env() -> dict[str, str]:
    """``.env.example`` as an operator fills it in: the blank secrets get random values."""
    return {
        key: value or secrets.token_hex(32) for key, value in read_env_file(ENV_EXAMPLE).items()
    }


def test_the_checker_knows_a_real_name_from_an_invented_one() -> None:
    assert is_setting("PIXELMILL_CPU_WORKERS")
    assert is_setting("PIXELMILL_ROUTE_ANALYZE")
    assert is_setting("PIXELMILL_ROUTE_")  # the pattern PIXELMILL_ROUTE_<OPERATION>
    assert not is_setting("PIXELMILL_CPU_THREADS")
    assert not is_setting("PIXELMILL_ROUTE_TELEPORT")
    assert names_in("set `PIXELMILL_ROUTE_<OPERATION>` or PIXELMILL_* or PIXELMILL_X_Y=1") == {
        "PIXELMILL_ROUTE_",
        "PIXELMILL_X_Y",
    }
    assert "PIXELMILL_TEST_POSTGRES_URL" in read_by_code([ROOT / "tests" / "support"])


def test_every_pixelmill_variable_compose_and_the_env_example_set_is_a_setting() -> None:
    compose = load_compose(filled_env())
    set_by_compose = {
        name
        for service in compose["services"].values()
        for name in service_environment(service)
        if name.startswith("PIXELMILL_")
    }
    set_by_env = {name for name in read_env_file(ENV_EXAMPLE) if name.startswith("PIXELMILL_")}
    set_by_image = {name for name in read_dockerfile().final.env() if name.startswith("PIXELMILL_")}
    assert len(set_by_compose) >= 10 and set_by_env and set_by_image
    unknown = sorted(n for n in set_by_compose | set_by_env | set_by_image if not is_setting(n))
    assert unknown == [], f"not settings (src/pixelmill/config.py): {unknown}"


def test_the_env_example_lists_exactly_the_variables_compose_uses() -> None:
    used = referenced_variables(COMPOSE.read_text())
    listed = set(read_env_file(ENV_EXAMPLE))
    assert sorted(used - listed) == [], "used by compose.yaml, missing from .env.example"
    assert sorted(listed - used) == [], "listed in .env.example, never used by compose.yaml"


def test_compose_refuses_to_start_without_the_secrets() -> None:
    from tests.deploy.files import MissingVariable

    blank = read_env_file(ENV_EXAMPLE)
    required = sorted(key for key, value in blank.items() if not value)
    assert required == ["PIXELMILL_SECRET_KEY", "POSTGRES_PASSWORD", "S3_SECRET_KEY"]
    for key in required:
        with pytest.raises(MissingVariable, match=key):
            load_compose({**filled_env(), key: ""})


def test_the_settings_accept_what_the_api_and_worker_services_get() -> None:
    compose = load_compose(filled_env())
    for name in ("api", "worker", "migrate"):
        env = service_environment(compose["services"][name])
        values = {
            key.removeprefix("PIXELMILL_").lower(): value
            for key, value in env.items()
            if key.startswith("PIXELMILL_") and value != ""
        }
        settings = Settings.model_validate(values)
        assert settings.env == "production" and settings.queue == "celery"
        assert settings.storage == "s3" and settings.s3_bucket == "pixelmill"


@pytest.mark.parametrize("path", [*deploy_files(), DOCKERFILE], ids=lambda p: p.name)
def test_every_name_in_the_deployment_files_is_a_setting(path: Path) -> None:
    unknown = sorted(n for n in names_in(path.read_text()) if not is_setting(n))
    assert unknown == [], f"{path.name} names variables the settings do not have: {unknown}"


@pytest.mark.parametrize("path", [*DOCS, ROOT / "README.md"], ids=lambda p: p.name)
def test_every_name_in_the_docs_is_read_by_some_code(path: Path) -> None:
    """A setting, or a variable the client, the test suite or an engine reads itself."""
    read = read_by_code(CODE_FOLDERS)
    unknown = sorted(n for n in names_in(path.read_text()) if not is_setting(n) and n not in read)
    assert unknown == [], f"{path.name} names variables nothing reads: {unknown}"
