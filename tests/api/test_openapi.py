"""The machine-readable description is a valid OpenAPI 3.0.3 document."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient
from openapi_spec_validator import validate
from openapi_spec_validator.validation.validators import OpenAPIV30SpecValidator


def test_openapi_is_valid_303(client: TestClient) -> None:
    r = client.get("/.well-known/openapi.json")
    assert r.status_code == 200
    doc = r.json()
    assert doc["openapi"] == "3.0.3"
    validate(doc, cls=OpenAPIV30SpecValidator)
    text = json.dumps(doc)
    assert '"type": "null"' not in text
    assert "anyOf" not in text or "nullable" in text


def test_info_version_is_the_interface_version(client: TestClient) -> None:
    info = client.get("/.well-known/openapi.json").json()["info"]
    assert info["version"] == "2.0.0"  # the interface's Versioning section
    assert "interface version 2.0.0" in info["description"]


def test_enrichment_job_create_is_documented_as_200(client: TestClient) -> None:
    """The interface's storefront table: every storefront endpoint answers HTTP 200."""
    op = client.get("/.well-known/openapi.json").json()["paths"]["/api/v2/shopify/enrichment-jobs"]
    responses = op["post"]["responses"]
    assert "200" in responses and "202" not in responses
    schema = responses["200"]["content"]["application/json"]["schema"]
    assert schema["$ref"].endswith("/EnrichmentJobCreated")


def test_every_authenticated_route_declares_security(client: TestClient) -> None:
    doc = client.get("/.well-known/openapi.json").json()
    schemes = doc["components"]["securitySchemes"]
    assert schemes["ApiKey"]["scheme"] == "bearer" and schemes["JWT"]["scheme"] == "bearer"
    open_routes = {
        ("post", "/api/auth/register"),
        ("post", "/api/auth/login"),
        ("get", "/api/credits/pricing"),
        # What is on sale, like the price list; Stripe's events carry their own signature.
        ("get", "/api/v2/billing/packs"),
        ("post", "/api/v2/billing/stripe-webhook"),
        ("get", "/healthz"),
        ("get", "/readyz"),
        # The public gallery's images: shown in pages and <img> tags, no key.
        ("get", "/api/v2/avatars/public/{model_id}.png"),
    }
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if (
                (method, path) in open_routes
                or path.startswith("/api/free-tools/")
                or path.startswith("/files/")
            ):
                continue
            assert op.get("security"), f"{method.upper()} {path} has no security"
    me = doc["paths"]["/api/auth/me"]["get"]["security"]
    assert {"ApiKey": []} in me and {"JWT": []} in me


def test_docs_page(client: TestClient) -> None:
    r = client.get("/docs")
    assert r.status_code == 200 and "swagger" in r.text.lower()
