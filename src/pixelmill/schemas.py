"""Types shared by the response models of every domain (each domain's ``schemas.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Self

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer


def iso(value: datetime | None) -> str | None:
    """An aware UTC datetime as ISO 8601 with a ``Z`` (``2026-01-02T03:04:05.123456Z``)."""
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


Timestamp = Annotated[datetime, PlainSerializer(iso, return_type=str)]
"""A datetime field rendered the one way every response renders times."""

TestFlag = Annotated[
    bool,
    Field(
        description="true for work made with a test key (pk_test_...): nothing charged, every "
        'image watermarked "TEST"'
    ),
]
"""The ``test`` field of result, job and batch bodies (always present; false for live keys)."""


class Schema(BaseModel):
    """Base of response models: built from ORM rows (``from_attributes``)."""

    model_config = ConfigDict(from_attributes=True, populate_by_name=True)

    @classmethod
    def from_row(cls, row: object, **computed: Any) -> Self:
        """The model of an ORM row: every field read from the row's attribute of the same
        name (or the field's ``validation_alias``), except those given in ``computed``."""
        data: dict[str, Any] = dict(computed)
        for name, field in cls.model_fields.items():
            if name not in data:
                alias = field.validation_alias
                attribute = alias if isinstance(alias, str) else name
                data[attribute] = getattr(row, attribute)
        return cls.model_validate(data)
