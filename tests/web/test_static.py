"""The dashboard's files: served at /app from the package, under a strict
Content-Security-Policy, every module it imports present, and nothing of it in the OpenAPI
document."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from pixelmill.web.routes import STATIC_DIR

IMPORT = re.compile(r"""^\s*import\s[^"']*["'](\.{1,2}/[^"']+)["']""", re.MULTILINE)


def test_app_page_and_assets(client: TestClient) -> None:
    r = client.get("/app", follow_redirects=False)
    assert r.status_code == 308 and r.headers["location"] == "/app/"
    page = client.get("/app/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert 'src="assets/app.js"' in page.text
    for asset, kind in (("app.js", "javascript"), ("app.css", "css"), ("favicon.svg", "svg")):
        r = client.get(f"/app/assets/{asset}")
        assert r.status_code == 200 and kind in r.headers["content-type"], asset
    assert client.get("/app/assets/missing.js").status_code == 404
    assert client.get("/app/assets/../routes.py").status_code == 404


def test_every_imported_module_is_packaged(client: TestClient) -> None:
    modules = sorted(STATIC_DIR.rglob("*.js"))
    assert len(modules) >= 5
    for module in modules:
        for target in IMPORT.findall(module.read_text()):
            path = (module.parent / target).resolve()
            assert path.is_file(), f"{module.name} imports a missing {target}"
            rel = path.relative_to(STATIC_DIR).as_posix()
            assert client.get(f"/app/assets/{rel}").status_code == 200


def test_not_in_the_openapi_document(client: TestClient) -> None:
    doc = client.get("/.well-known/openapi.json").json()
    assert not [p for p in doc["paths"] if p.startswith("/app")]
