"""Bad path and query parameters are a 4xx with ``detail``, never a 500 (found by fuzzing the
OpenAPI document): non-ASCII file keys and signatures, integers beyond what the database holds."""

from __future__ import annotations

import httpx
import pytest
from fastapi.testclient import TestClient

from pixelmill.resources import Resources
from pixelmill.storage import UrlSigner
from tests.support.accounts import make_account


def _assert_4xx_detail(r: httpx.Response, status: int) -> None:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    assert r.json()["detail"]


@pytest.mark.parametrize("prefix", ["/files", "/files/library"])
@pytest.mark.parametrize(
    "query",
    [
        "r%C3%A9sultat.png?exp=1&sig=abc",  # non-ASCII key
        "results/a.png?exp=1&sig=%C3%A9%C3%A9",  # non-ASCII signature
        "%F0%9F%96%BC.png?exp=99999999999999999999999&sig=%E2%80%8B",  # both, huge exp
        "a.png?exp=1&sig=%ED%A0%80",  # an encoded lone surrogate
        "a.png%0A?exp=1&sig=00",  # a key with a newline
    ],
)
def test_files_with_odd_keys_and_signatures_are_404(
    client: TestClient, prefix: str, query: str
) -> None:
    _assert_4xx_detail(client.get(f"{prefix}/{query}"), 404)


def test_signer_refuses_non_ascii_signatures_without_raising() -> None:
    signer = UrlSigner("s" * 40, 3600)
    path = signer.path_for("results/é.png")
    sig = path.split("sig=")[1]
    exp = int(path.split("exp=")[1].split("&")[0])
    assert signer.check("results/é.png", exp, sig) is None
    assert signer.check("results/é.png", exp, "é" * 32) == "invalid signature"
    assert signer.check("results/\udc80.png", exp, sig) == "invalid signature"


def test_valid_link_to_a_non_ascii_key_is_still_404(
    client: TestClient, resources: Resources
) -> None:
    # Correctly signed, but no stored key can have such a name.
    path = resources.signer.path_for("results/é.png")
    _assert_4xx_detail(client.get(path.replace("é", "%C3%A9")), 404)


@pytest.mark.parametrize("webhook_id", [str(2**64), str(2**63), str(2**31), "0", "-1"])
def test_webhook_ids_outside_the_column_are_422(
    client: TestClient, resources: Resources, webhook_id: str
) -> None:
    acct = make_account(resources, credits=0)
    r = client.delete(f"/api/v2/webhooks/{webhook_id}", headers=acct.key_headers)
    _assert_4xx_detail(r, 422)
    assert r.json()["detail"][0]["loc"] == ["path", "webhook_id"]


def test_webhook_id_in_range_but_unknown_is_404(client: TestClient, resources: Resources) -> None:
    acct = make_account(resources, credits=0)
    r = client.delete(f"/api/v2/webhooks/{2**31 - 1}", headers=acct.key_headers)
    _assert_4xx_detail(r, 404)


@pytest.mark.parametrize(
    "path", ["/api/v1/history", "/api/v2/account/history", "/api/v2/jobs", "/api/v2/batches"]
)
def test_offsets_beyond_64_bits_are_422(
    client: TestClient, resources: Resources, path: str
) -> None:
    acct = make_account(resources, credits=0)
    _assert_4xx_detail(client.get(f"{path}?offset={2**64}", headers=acct.key_headers), 422)
    r = client.get(f"{path}?offset={2**63 - 1}", headers=acct.key_headers)
    assert r.status_code == 200, r.text
