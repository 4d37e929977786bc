"""Health and readiness; malformed requests never produce a 5xx."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_healthz_and_readyz(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    r = client.get("/readyz")
    assert r.status_code == 200 and r.json()["status"] == "ready"


def test_unknown_route_and_method_are_json(client: TestClient) -> None:
    r = client.get("/api/v2/nope")
    assert r.status_code == 404 and r.json()["detail"] == "Not Found"
    r = client.put("/api/auth/login")
    assert r.status_code == 405 and isinstance(r.json()["detail"], str)


def test_oversized_body_is_413(client: TestClient) -> None:
    r = client.post(
        "/api/auth/register",
        content=b"x",
        headers={"Content-Type": "application/json", "Content-Length": str(10**10)},
    )
    assert r.status_code == 413 and "too large" in r.json()["detail"]


def test_malformed_inputs_never_500(client: TestClient) -> None:
    cases = [
        (
            "post",
            "/api/auth/register",
            {"content": b"\xff\xfe", "headers": {"Content-Type": "application/json"}},
        ),
        ("post", "/api/auth/register", {"json": [1, 2, 3]}),
        ("post", "/api/auth/register", {"json": {"email": None, "password": 5}}),
        (
            "post",
            "/api/auth/login",
            {"content": b"%%%", "headers": {"Content-Type": "application/x-www-form-urlencoded"}},
        ),
        ("post", "/api/auth/login", {"json": {"username": "a"}}),
        ("get", "/api/v2/account", {"headers": {"Authorization": "Bearer " + "a" * 10000}}),
        ("get", "/api/auth/me", {"headers": {"Authorization": "Bearer \u00e9\u00e9".encode()}}),
    ]
    for method, path, kwargs in cases:
        r = client.request(method, path, **kwargs)  # type: ignore[arg-type]
        assert 400 <= r.status_code < 500, (path, kwargs, r.status_code, r.text)
        assert r.headers["content-type"].startswith("application/json")
