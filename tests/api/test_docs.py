"""``/docs`` and ``/redoc`` work with no network: Swagger UI's and ReDoc's pages name no other
host, and the JavaScript, CSS and icon they load are served by the app itself."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urlsplit

from fastapi.testclient import TestClient

from pixelmill.app import OPENAPI_URL


class _Assets(HTMLParser):
    """The URLs a page loads: ``<script src>`` and ``<link href>``."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "script" and values.get("src"):
            self.scripts.append(str(values["src"]))
        if tag == "link" and values.get("href"):
            self.links.append(str(values["href"]))


def _foreign_urls(html: str) -> list[str]:
    return [
        url
        for url in re.findall(r"(?:https?:)?//[^\s'\"<>)]+", html)
        if urlsplit(url if "://" in url else "http:" + url).hostname not in ("testserver", None)
    ]


def test_docs_page_names_no_other_host(client: TestClient) -> None:
    r = client.get("/docs")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    html = r.text
    assert _foreign_urls(html) == []
    assert f"url: '{OPENAPI_URL}'" in html
    assert '"validatorUrl": null' in html  # no badge fetched from a validator host


def test_docs_assets_are_served_locally(client: TestClient) -> None:
    page = _Assets()
    page.feed(client.get("/docs").text)
    assert len(page.scripts) == 1 and len(page.links) == 2  # the bundle; CSS and icon
    expected = {".js": "javascript", ".css": "text/css", ".png": "image/png"}
    for url in page.scripts + page.links:
        assert url.startswith("/"), url  # same origin
        r = client.get(url)
        assert r.status_code == 200, url
        kind = expected[url[url.rindex(".") :]]
        assert kind in r.headers["content-type"], (url, r.headers["content-type"])
        assert len(r.content) > 100
    bundle = client.get(page.scripts[0])
    assert b"SwaggerUIBundle" in bundle.content and len(bundle.content) > 500_000
    assert client.get(OPENAPI_URL).json()["openapi"] == "3.0.3"


def test_docs_assets_are_not_in_the_api_document(client: TestClient) -> None:
    paths = client.get(OPENAPI_URL).json()["paths"]
    assert not [p for p in paths if p.startswith("/docs")]


def test_redoc_is_served_offline(client: TestClient) -> None:
    r = client.get("/redoc")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert _foreign_urls(r.text) == []  # no CDN script, no Google Fonts
    assert f'spec-url="{OPENAPI_URL}"' in r.text
    page = _Assets()
    page.feed(r.text)
    assert len(page.scripts) == 1 and page.scripts[0].startswith("/"), page.scripts
    bundle = client.get(page.scripts[0])
    assert bundle.status_code == 200 and "javascript" in bundle.headers["content-type"]
    assert b"Redoc" in bundle.content and len(bundle.content) > 500_000
    for url in page.links:
        assert url.startswith("/") and client.get(url).status_code == 200, url
    paths = client.get(OPENAPI_URL).json()["paths"]
    assert "/redoc" not in paths
