"""Field types of the multipart surfaces.

A multipart value is always text, and pydantic's lax mode turns ``"95"`` into ``95`` for an
``int`` but not for a choice of integers (``Literal[2, 4, 8]`` refuses ``"4"``). These types read
the text first, so ``-F scale=4`` works while the OpenAPI document still lists the integers."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BeforeValidator

_DECIMAL = re.compile(r"[+-]?[0-9]{1,18}")


def int_from_form(value: object) -> object:
    """A decimal integer written as text becomes that integer; anything else is passed on
    unchanged to the type's own validation (and its 422)."""
    if isinstance(value, str) and _DECIMAL.fullmatch(value.strip()):
        return int(value)
    return value


UpscaleFactor = Annotated[Literal[2, 4, 8], BeforeValidator(int_from_form)]
"""2, 4 or 8, as a number or its decimal text."""
