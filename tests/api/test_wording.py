"""Words that said something untrue (issue 60): a guided avatar's history row showed a 1 x 1
input, the test key came back under another name than every other key, the Remove Text card
said OCR where the default is the learned remover, docs/backends.md called routed operations
unrouted, and the dashboard named a command that does not exist (tests/test_commands_named.py
checks every command named)."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from pixelmill.resources import Resources
from tests.support.accounts import login, make_account

ROOT = Path(__file__).resolve().parents[2]


def test_a_guided_avatar_has_no_input_size_in_history(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    token = login(client, acct.email, acct.password)
    r = client.post(
        "/api/avatars/generate-guided",
        json={"prompt": "a woman with short black hair", "count": 1},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert r.status_code == 200, r.text
    items = client.get("/api/v2/account/history", headers=acct.key_headers).json()["items"]
    [row] = [i for i in items if i["kind"] == "sync"]
    assert row["operation"] == "avatar_guided"
    assert row["original_size"] == [None, None]


def test_the_test_key_comes_as_api_key_like_every_key(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources)
    body = client.post("/api/v2/account/test-key", headers=acct.key_headers).json()
    assert body["api_key"] == body["token"] and body["api_key"].startswith("pk_test_")


def test_remove_text_says_its_default_is_the_learned_remover(client: TestClient) -> None:
    doc = client.get("/.well-known/openapi.json").json()
    description = doc["paths"]["/api/v2/remove-text"]["post"]["description"]
    first = description.split(".")[0]
    assert "learned overlay remover" in first and "OCR" not in first.split("(")[0]


def test_backends_doc_does_not_call_routed_operations_unrouted() -> None:
    text = (ROOT / "docs" / "backends.md").read_text()
    assert "Not routed yet" not in text
    for capability in ("SCENES", "AVATAR_GUIDED", "AVATAR_REFERENCE", "PRODUCT_PHOTO"):
        assert f"| `{capability}` |" in text
