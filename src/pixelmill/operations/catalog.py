"""The operation catalog: what each operation runs, what it costs and what it writes.

An operation names its engine (whose ``Params`` model is validated before any credit is
reserved), its price as a function of those parameters and its default output format. Surfaces
only translate their request shapes into an operation name + parameters, and render the outcome;
none of them lists the catalog, so an entry here (``scenes``, priced for the job path) is exposed
only where a surface names it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from pixelmill.credits.pricing import (
    OPERATION_PRICES,
    per_output_price,
    scenes_price,
    upscale_price,
)


@dataclass(frozen=True)
class Operation:
    name: str
    engine: str
    price: Callable[[BaseModel], int]
    # "input": keep the input's format; otherwise that format unless the caller asks for another
    # (a result with alpha is never written as JPEG by default).
    default_format: Literal["input", "png", "jpeg"]


def _flat(name: str) -> Callable[[BaseModel], int]:
    price = OPERATION_PRICES[name]
    return lambda _params: price


def _upscale(params: BaseModel) -> int:
    return upscale_price(int(getattr(params, "scale", 2)))


def _per_output(name: str) -> Callable[[BaseModel], int]:
    def price(params: BaseModel) -> int:
        return per_output_price(name, int(getattr(params, "num_outputs", 1)))

    return price


def _per_text_field(params: BaseModel) -> int:
    return OPERATION_PRICES["product_text"] * len(getattr(params, "fields", ()) or ())


def _scenes(params: BaseModel) -> int:
    return scenes_price(int(getattr(params, "num_scenes", 4)))


CATALOG: dict[str, Operation] = {
    op.name: op
    for op in (
        Operation("background_removal", "background_removal", _flat("background_removal"), "png"),
        Operation("make_transparent", "make_transparent", _flat("make_transparent"), "png"),
        Operation("upscale", "upscale", _upscale, "input"),
        Operation("text_removal", "text_removal", _flat("text_removal"), "input"),
        Operation("convert", "convert", _flat("convert"), "input"),
        Operation("enhance", "enhance", _flat("enhance"), "input"),
        Operation("unblur", "unblur", _flat("unblur"), "input"),
        Operation("colorize", "colorize", _flat("colorize"), "input"),
        Operation("style_transfer", "style_transfer", _flat("style_transfer"), "input"),
        Operation("analyze", "analyze", _flat("analyze"), "input"),
        Operation("image_to_prompt", "image_to_prompt", _flat("image_to_prompt"), "input"),
        Operation("edit", "edit", _flat("edit"), "input"),
        Operation("image_to_image", "edit", _flat("image_to_image"), "input"),
        Operation("replace_background", "replace_background", _flat("replace_background"), "input"),
        # The asynchronous job path only (scene jobs and batches); no synchronous surface.
        Operation("scenes", "scenes", _scenes, "jpeg"),
        Operation("avatar_guided", "avatar_guided", _per_output("avatar"), "png"),
        Operation("avatar_reference", "avatar_reference", _per_output("avatar"), "png"),
        Operation("product_photo", "product_photo", _per_output("product_photo"), "jpeg"),
        Operation("tryon", "tryon", _per_output("tryon"), "jpeg"),
        # JWT catalog: silhouette shots of a saved product (create-silo).
        Operation("silo", "silo", _per_output("silo"), "jpeg"),
        # Platform ads (JWT generate-ai-ad): free; the ad pack prices its parts itself.
        Operation("ad", "ad", lambda _params: 0, "jpeg"),
        # Storefront enrichment jobs only: a product's description, tags, alt text (JSON out).
        Operation("product_text", "product_text", _per_text_field, "input"),
    )
}
