"""Turn FastAPI's OpenAPI 3.1 document into a valid OpenAPI 3.0.3 one.

The spec promises 3.0.3 at ``/.well-known/openapi.json``. FastAPI and pydantic emit JSON Schema
2020-12 (the dialect of OpenAPI 3.1), so the schema objects are rewritten to the 3.0 dialect:
``anyOf [X, null]`` → ``X`` + ``nullable: true``; ``const`` → one-value ``enum``;
``examples`` → ``example``; numeric ``exclusiveMinimum``/``Maximum`` → boolean form;
``contentMediaType`` (file uploads) → ``format: binary``; ``prefixItems`` → ``items``; and a
``$ref`` with siblings is wrapped in ``allOf`` (3.0 ignores siblings of ``$ref``). Keywords 3.0
does not know are dropped. The result is checked by openapi-spec-validator in the tests.
"""

from __future__ import annotations

from typing import Any

_DROP = {
    "$schema",
    "$id",
    "propertyNames",
    "patternProperties",
    "unevaluatedProperties",
    "dependentRequired",
    "dependentSchemas",
    "if",
    "then",
    "else",
    "contentEncoding",
    "$defs",
    "$comment",
}


def _is_null(s: Any) -> bool:
    return isinstance(s, dict) and s.get("type") == "null" and len(s) == 1


def convert_schema(node: Any) -> Any:
    """Convert one JSON Schema 2020-12 object (recursively) to the OpenAPI 3.0 dialect."""
    if isinstance(node, list):
        return [convert_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    s: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP:
            continue
        if key in ("properties", "patternProperties"):
            s[key] = {k: convert_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not"):
            s[key] = convert_schema(value)
        elif key in ("anyOf", "oneOf", "allOf"):
            s[key] = [convert_schema(v) for v in value]
        else:
            s[key] = value

    for combinator in ("anyOf", "oneOf"):
        options = s.get(combinator)
        if isinstance(options, list) and any(_is_null(o) for o in options):
            rest = [o for o in options if not _is_null(o)]
            del s[combinator]
            s["nullable"] = True
            if len(rest) == 1:
                only = rest[0]
                if "$ref" in only:
                    s["allOf"] = [only]
                else:
                    for k, v in only.items():
                        s.setdefault(k, v)
            elif rest:
                s[combinator] = rest

    t = s.get("type")
    if isinstance(t, list):
        kinds = [k for k in t if k != "null"]
        if len(kinds) < len(t):
            s["nullable"] = True
        if len(kinds) == 1:
            s["type"] = kinds[0]
        else:
            del s["type"]
            s["anyOf"] = [{"type": k} for k in kinds]
    if s.get("type") == "null":
        del s["type"]
        s["nullable"] = True

    if "const" in s:
        s["enum"] = [s.pop("const")]
    if "examples" in s:
        examples = s.pop("examples")
        if isinstance(examples, list) and examples:
            s.setdefault("example", examples[0])
    for bound, plain in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        value = s.get(bound)
        if isinstance(value, int | float) and not isinstance(value, bool):
            s[plain] = value
            s[bound] = True
    if "contentMediaType" in s:
        s.pop("contentMediaType")
        s["type"] = "string"
        s["format"] = "binary"
    if "prefixItems" in s:
        prefix = [convert_schema(p) for p in s.pop("prefixItems")]
        s["items"] = prefix[0] if len({repr(p) for p in prefix}) == 1 else {"anyOf": prefix}
    if "$ref" in s and len(s) > 1:
        ref = s.pop("$ref")
        s["allOf"] = [{"$ref": ref}, *s.get("allOf", [])]
    return s


def _convert_content(content: dict[str, Any]) -> None:
    for media in content.values():
        if "schema" in media:
            media["schema"] = convert_schema(media["schema"])
        media.pop("examples", None) if not isinstance(media.get("examples"), dict) else None


def to_openapi_303(doc: dict[str, Any]) -> dict[str, Any]:
    """Rewrite a FastAPI-generated OpenAPI document in place as 3.0.3 and return it."""
    doc["openapi"] = "3.0.3"
    doc.get("info", {}).pop("summary", None)  # 3.1-only
    doc.pop("webhooks", None)
    doc.pop("jsonSchemaDialect", None)
    components = doc.get("components", {})
    if "schemas" in components:
        components["schemas"] = {k: convert_schema(v) for k, v in components["schemas"].items()}
    for path_item in doc.get("paths", {}).values():
        for operation in path_item.values():
            if not isinstance(operation, dict):
                continue
            for param in operation.get("parameters", []):
                if "schema" in param:
                    param["schema"] = convert_schema(param["schema"])
            body = operation.get("requestBody")
            if body and "content" in body:
                _convert_content(body["content"])
            for response in operation.get("responses", {}).values():
                if "content" in response:
                    _convert_content(response["content"])
    return doc


def document_error_bodies(doc: dict[str, Any]) -> dict[str, Any]:
    """Make the documented 422 body match what the app sends, in place; returns ``doc``.

    FastAPI documents a 422 as request validation only: ``detail`` is a list of field errors.
    The app also answers 422 with one message, ``{"detail": "..."}``, when a well-formed
    request cannot be done (an image too small to work on, a parameter an engine refuses), and
    ``/api/process`` adds its own fields beside ``detail``; so ``detail`` is either."""
    schemas = doc.get("components", {}).get("schemas", {})
    body = schemas.get("HTTPValidationError")
    if body is not None:
        body.setdefault("properties", {})["detail"] = {
            "anyOf": [
                {"type": "array", "items": {"$ref": "#/components/schemas/ValidationError"}},
                {"type": "string"},
            ],
            "title": "Detail",
            "description": "the field errors of a request that does not validate, or one "
            "message for a request that cannot be done",
        }
        body["required"] = ["detail"]
    return doc
