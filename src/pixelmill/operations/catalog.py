"""The operation catalog: what each operation runs, what it costs and how it is limited.

An operation names its engine, its parameter model (validated before any credit is reserved),
its price as a function of the parameters, its per-endpoint rate bucket on the unversioned
surface and its default output format. Surfaces only translate their request shapes into an
operation name + parameters, and render the outcome."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from pixelmill.credits.pricing import OPERATION_PRICES, upscale_price

OutputFormat = Literal["png", "jpeg", "webp"]


@dataclass(frozen=True)
class Operation:
    name: str
    engine: str
    price: Callable[[BaseModel], int]
    # "input": keep the input's format; "png": always PNG unless the caller asks otherwise.
    default_format: Literal["input", "png", "jpeg"]
    rate_bucket: str | None = None
    produces_image: bool = True


def _flat(name: str) -> Callable[[BaseModel], int]:
    price = OPERATION_PRICES[name]
    return lambda _params: price


def _upscale(params: BaseModel) -> int:
    return upscale_price(int(getattr(params, "scale", 2)))


CATALOG: dict[str, Operation] = {
    op.name: op
    for op in (
        Operation(
            "background_removal",
            "background_removal",
            _flat("background_removal"),
            "png",
            "background_removal",
        ),
        Operation("make_transparent", "make_transparent", _flat("make_transparent"), "png"),
        Operation("upscale", "upscale", _upscale, "input", "upscale"),
        Operation("text_removal", "text_removal", _flat("text_removal"), "input", "text_removal"),
        Operation("convert", "convert", _flat("convert"), "input"),
        Operation("enhance", "enhance", _flat("enhance"), "input"),
        Operation("unblur", "unblur", _flat("unblur"), "input"),
        Operation("colorize", "colorize", _flat("colorize"), "input"),
        Operation("style_transfer", "style_transfer", _flat("style_transfer"), "input"),
        Operation("analyze", "analyze", _flat("analyze"), "input", produces_image=False),
        Operation(
            "image_to_prompt",
            "image_to_prompt",
            _flat("image_to_prompt"),
            "input",
            produces_image=False,
        ),
        Operation("edit", "edit", _flat("edit"), "input"),
        Operation("image_to_image", "edit", _flat("image_to_image"), "input", "image_to_image"),
        Operation("replace_background", "replace_background", _flat("replace_background"), "input"),
    )
}
