"""Unknown request fields are refused, not silently ignored.

A misspelled field (``num_images`` for ``num_outputs``, ``bg_colour`` for ``bg_color``) used to be
dropped by validation, and the call ran, and was billed, with the default. Every JSON and form
body is now checked against the fields its route declares, before the endpoint runs (so before
any reservation or charge): each unknown field is a 422 entry of type ``unknown_field`` naming it,
with "did you mean `x`?" when a declared field is close (difflib). Nested objects are checked
the same way where the field's type is one model (or a list or optional of one); the keys of
free-form ``dict`` fields, and models that keep extras on purpose (``extra="allow"``), are not.

The public clients send no field that is not declared (the fields of
spec/client-contract.md, and tests/clients/ run the real clients' requests), so no extra field
is tolerated by name; docs/decisions.md records the choice.

The same check answers two other body mistakes clearly: a JSON route sent a body without a JSON
``Content-Type`` and a form route (login) sent JSON.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Union, get_args, get_origin

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.params import File, Form
from fastapi.routing import APIRoute
from pydantic import AliasChoices, AliasPath, BaseModel


@dataclass
class Shape:
    """The fields an object may carry; ``nested`` gives the shape of a field's value where it
    is an object (or list of objects) of a known model."""

    names: frozenset[str]
    nested: dict[str, Shape] = field(default_factory=dict)


@dataclass(frozen=True)
class BodyShape:
    form: bool
    shape: Shape


_SHAPES: dict[int, BodyShape | None] = {}
_MODEL_SHAPES: dict[type[BaseModel], Shape | None] = {}


def _field_names(name: str, info: Any) -> set[str]:
    names = {name}
    for alias in (info.alias, info.validation_alias):
        if isinstance(alias, str):
            names.add(alias)
        elif isinstance(alias, AliasChoices):
            names.update(c for c in alias.choices if isinstance(c, str))
        elif isinstance(alias, AliasPath) and alias.path and isinstance(alias.path[0], str):
            names.add(alias.path[0])
    return names


def _single_model(annotation: Any) -> type[BaseModel] | None:
    """The one model a value of ``annotation`` is (or is a list of), else None."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _single_model(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        models = [a for a in get_args(annotation) if a is not type(None)]
        return _single_model(models[0]) if len(models) == 1 else None
    if origin in (list, tuple, set, frozenset):
        args = [a for a in get_args(annotation) if a is not Ellipsis]
        return _single_model(args[0]) if len(args) == 1 else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def model_shape(model: type[BaseModel]) -> Shape | None:
    """The fields ``model`` accepts, or None when it keeps unknown fields on purpose."""
    if model in _MODEL_SHAPES:
        return _MODEL_SHAPES[model]
    _MODEL_SHAPES[model] = None  # a model that contains itself is checked one level deep
    if model.model_config.get("extra") == "allow":
        return None
    names: set[str] = set()
    nested: dict[str, Shape] = {}
    for name, info in model.model_fields.items():
        accepted = _field_names(name, info)
        names |= accepted
        inner = _single_model(info.annotation)
        inner_shape = model_shape(inner) if inner is not None else None
        if inner_shape is not None:
            for key in accepted:
                nested[key] = inner_shape
    shape = Shape(frozenset(names), nested)
    _MODEL_SHAPES[model] = shape
    return shape


def _body_shape(route: APIRoute) -> BodyShape | None:
    params = list(route.dependant.body_params)
    stack = list(route.dependant.dependencies)
    while stack:
        sub = stack.pop()
        params += sub.body_params
        stack += sub.dependencies
    if not params:
        return None
    form = any(isinstance(p.field_info, Form | File) for p in params)
    if len(params) == 1 and not form:
        model = _single_model(params[0].field_info.annotation)
        shape = model_shape(model) if model is not None else None
        return BodyShape(False, shape) if shape is not None else None
    names: set[str] = set()
    nested: dict[str, Shape] = {}
    for p in params:
        model = _single_model(p.field_info.annotation) if form else None
        inner = model_shape(model) if model is not None else None
        if form and inner is not None:  # a form model: its fields are the form's fields
            names |= inner.names
        else:
            names |= {p.name, p.alias}
            if inner is not None:
                nested[p.alias] = inner
    return BodyShape(form, Shape(frozenset(names), nested))


def unknown_fields(value: Any, shape: Shape, loc: tuple[str | int, ...]) -> list[dict[str, Any]]:
    """The validation errors of the unknown keys in ``value`` (and in its nested objects)."""
    if isinstance(value, list):
        errors = []
        for i, item in enumerate(value):
            errors += unknown_fields(item, shape, (*loc, i))
        return errors
    if not isinstance(value, Mapping):
        return []
    errors = []
    for key, item in value.items():
        if key not in shape.names:
            errors.append(unknown_field_error(str(key), shape.names, (*loc, key), item))
        elif key in shape.nested:
            errors += unknown_fields(item, shape.nested[key], (*loc, key))
    return errors


def near_miss(name: str, known: frozenset[str]) -> str | None:
    """The declared field ``name`` was most likely meant as: the closest by difflib's ratio
    (at least 0.6), else the only one sharing its first word (``num_images`` -> ``num_outputs``
    where ``num_outputs`` is the only ``num_`` field)."""
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    if close:
        return close[0]
    head, sep, _ = name.partition("_")
    if sep:
        same = [k for k in known if k.startswith(head + "_")]
        if len(same) == 1:
            return same[0]
    return None


def unknown_field_error(
    name: str, known: frozenset[str], loc: tuple[str | int, ...], value: Any
) -> dict[str, Any]:
    close = near_miss(name, known)
    hint = f"; did you mean `{close}`?" if close else f"; known fields: {', '.join(sorted(known))}"
    return {
        "type": "unknown_field",
        "loc": loc,
        "msg": f"Unknown field `{name}`{hint}",
        "input": value if isinstance(value, str | int | float | bool | None) else None,
    }


def _content_type(request: Request) -> str:
    raw = request.headers.get("content-type", "")
    return raw.split(";", 1)[0].strip().lower()


def _is_json(content_type: str) -> bool:
    return content_type == "application/json" or (
        content_type.startswith("application/") and content_type.endswith("+json")
    )


async def refuse_unknown_fields(request: Request) -> None:
    """App-wide dependency: a 422 for each unknown field of the request's body (module doc)."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    key = id(route)
    if key not in _SHAPES:
        _SHAPES[key] = _body_shape(route)
    body = _SHAPES[key]
    if body is None:
        return
    content_type = _content_type(request)
    if body.form:
        if _is_json(content_type):
            raise RequestValidationError(
                [
                    {
                        "type": "form_expected",
                        "loc": ("body",),
                        "msg": "This endpoint takes form fields (application/x-www-form-"
                        "urlencoded or multipart/form-data), not JSON",
                        "input": None,
                    }
                ]
            )
        form = await request.form()  # parsed once: the framework's own read is cached
        errors = [
            unknown_field_error(name, body.shape.names, ("body", name), None)
            for name in dict.fromkeys(form.keys())
            if name not in body.shape.names
        ]
    else:
        if not await request.body():
            return
        if not _is_json(content_type):
            raise RequestValidationError(
                [
                    {
                        "type": "json_expected",
                        "loc": ("body",),
                        "msg": "Send the body as JSON with the header "
                        "Content-Type: application/json"
                        + (f" (got {content_type})" if content_type else " (none was sent)"),
                        "input": None,
                    }
                ]
            )
        try:
            data = await request.json()  # cached: the framework parsed it already
        except ValueError:
            return  # the framework's own 422 (JSON decode error) follows
        errors = unknown_fields(data, body.shape, ("body",))
    if errors:
        raise RequestValidationError(errors)
