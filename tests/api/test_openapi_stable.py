"""The public interface does not drift while the code behind it is reorganised: the OpenAPI
document, with its prose (string ``description`` and ``summary`` fields) and ``info`` left
out, equals the one recorded in ``openapi_baseline.json``.

An intended change of paths, bodies or status codes updates the baseline in the same commit:
``python -m tests.api.test_openapi_stable`` rewrites it from the running code."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fastapi.testclient import TestClient

BASELINE = Path(__file__).with_name("openapi_baseline.json")


def shape(node: object) -> object:
    """The document without its prose: string ``description``/``summary`` values and ``info``
    go; a schema property that happens to be named ``description`` (a dict) stays."""
    if isinstance(node, dict):
        return {
            key: shape(value)
            for key, value in node.items()
            if not (key in ("description", "summary") and isinstance(value, str)) and key != "info"
        }
    if isinstance(node, list):
        return [shape(item) for item in node]
    return node


def dump(doc: object) -> str:
    return json.dumps(shape(doc), indent=1, sort_keys=True) + "\n"


def test_openapi_shape_is_unchanged(client: TestClient) -> None:
    doc = client.get("/.well-known/openapi.json").json()
    now = json.loads(dump(doc))
    before = json.loads(BASELINE.read_text())
    assert sorted(now["paths"]) == sorted(before["paths"])
    for path, item in before["paths"].items():
        assert now["paths"][path] == item, f"{path} changed"
    assert now["components"] == before["components"]
    assert now == before


def test_component_names_are_public_names(client: TestClient) -> None:
    # Two models of one class name in different modules get FastAPI's module-path names
    # (``pixelmill__marketing__schemas__ProductOut``): they leak the code's layout into generated
    # SDKs and change whenever a module moves. Each schema has a name of its own.
    names = client.get("/.well-known/openapi.json").json()["components"]["schemas"]
    assert [name for name in names if "__" in name or name.startswith("pixelmill")] == []


if __name__ == "__main__":  # pragma: no cover - the baseline's writer
    import tempfile

    from pixelmill.app import create_app
    from pixelmill.db.migrate import upgrade
    from pixelmill.resources import build_resources
    from pixelmill.worker import wire
    from tests.support.settings import make_settings

    folder = Path(tempfile.mkdtemp())
    url = f"sqlite:///{folder}/openapi.db"
    upgrade(url)
    settings = make_settings(url, folder / "data")
    resources = wire(build_resources(settings))
    with TestClient(create_app(settings, resources)) as c:
        BASELINE.write_text(dump(c.get("/.well-known/openapi.json").json()))
    resources.close()
    sys.exit(0)
