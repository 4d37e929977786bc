"""The ``enrichment`` job kind: a storefront job's products, enrichment by enrichment, on the
job machinery (``jobs/runner.py``).

Every (product, enrichment) pair is one planned output with its own catalog price: a text
field (``description``, ``tags``, ``alt_text``) is a JSON file written by the registry's
``product_text`` engine, an image operation (``remove_background``, ``upscale``, each scene of
``scenes``) a PNG from the registry's engine of that operation. The runner stores each
delivered output and captures its price in the transaction that records it; :meth:`record`
writes the value into the product's entry of the ``enrichment_jobs`` row in that same
transaction. An output that cannot be produced (the image URL cannot be fetched, an engine
refuses) is written into the product's entry in a short transaction fenced by the run's token
and counted a failure by the runner (nothing captured; the job's finish releases it).

A product's image is read, and its text written, once per run (memoised per product), so the
three text fields of a product cost one analysis. Positions are ``product index * SLOTS +
item index`` and labels ``"<product index>:<item>"``: a resumed run skips what an earlier run
of the same job delivered.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from pixelmill.db.base import utcnow
from pixelmill.db.models import EnrichmentJob
from pixelmill.db.session import Database
from pixelmill.engines.base import (
    Engine,
    EngineError,
    EngineInputs,
    EngineResult,
    ImageArray,
    OutputFile,
    OutputImage,
    Planned,
    PlannedFile,
    PlannedImage,
)
from pixelmill.engines.product_text import TEXT_FIELDS, ProductTextParams
from pixelmill.engines.scenes import ScenesParams
from pixelmill.engines.upscale import UpscaleParams
from pixelmill.imaging import ImageInputError
from pixelmill.jobs import service as jobs
from pixelmill.jobs.runner import Rendered
from pixelmill.jobs.service import Claim
from pixelmill.library.images import load_image
from pixelmill.operations.catalog import CATALOG
from pixelmill.operations.inputs import ImageSource, InputReader
from pixelmill.operations.params import engine_for, multi_image_engine_for
from pixelmill.storage import ObjectStorage

log = logging.getLogger("pixelmill.storefront")

KIND = "enrichment"
SLOTS = 100
"""Positions per product (at most 3 text fields + 6 image outputs are planned)."""

IMAGE_OPERATIONS: dict[str, str] = {
    "remove_background": "background_removal",
    "upscale": "upscale",
    "scenes": "scenes",
}
"""Image operation of a storefront job -> catalog operation."""

T = TypeVar("T")


class _Defaults(BaseModel):
    """An operation's default parameters, for a flat catalog price."""


# ---- what a job plans and what each item costs ---------------------------------------------


def item_names(
    enrichments: Sequence[str], image_operations: Sequence[Mapping[str, Any]]
) -> list[str]:
    """The items planned for every product, in order: the text fields asked for, then each
    image operation (``scenes:<k>`` once per scene)."""
    names: list[str] = [f for f in TEXT_FIELDS if f in enrichments]
    if "images" in enrichments:
        for op in image_operations:
            name = str(op["operation"])
            if name == "scenes":
                names.extend(f"scenes:{k}" for k in range(int(op.get("count", 1))))
            else:
                names.append(name)
    return names


def item_price(item: str, image_operations: Sequence[Mapping[str, Any]]) -> int:
    """The catalog's price of one item."""
    if item in TEXT_FIELDS:
        return CATALOG["product_text"].price(
            ProductTextParams.model_validate({"title": "-", "fields": [item]})
        )
    if item.startswith("scenes:"):
        return CATALOG["scenes"].price(ScenesParams(num_scenes=1))
    if item == "upscale":
        scale = next(
            (int(o.get("scale", 2)) for o in image_operations if o["operation"] == item), 2
        )
        return CATALOG["upscale"].price(UpscaleParams.model_validate({"scale": scale}))
    return CATALOG[IMAGE_OPERATIONS[item]].price(_Defaults())


def job_price(
    products: int, enrichments: Sequence[str], image_operations: Sequence[Mapping[str, Any]]
) -> tuple[int, int]:
    """``(items, credits)`` for ``products`` products."""
    names = item_names(enrichments, image_operations)
    return products * len(names), products * sum(item_price(n, image_operations) for n in names)


def parse_label(label: str) -> tuple[int, str]:
    index, _, item = label.partition(":")
    return int(index), item


# ---- the per-product state in enrichment_jobs.products --------------------------------------


def new_product_state(
    product_id: str, title: str, description: str, tags: list[str], items: list[str]
) -> dict[str, Any]:
    return {
        "id": product_id,
        "title": title,
        "before": {"description": description, "tags": tags},
        "status": "pending",
        "pending": list(items),
        "result": {},
        "images": [],
        "errors": [],
        "method": None,
        "credits_used": 0,
    }


def _product_status(p: Mapping[str, Any], total_items: int) -> str:
    if p["pending"]:
        return "processing" if len(p["pending"]) < total_items else "pending"
    return "failed" if p["errors"] else "completed"


def recount(row: EnrichmentJob) -> None:
    """``products_completed`` / ``products_failed`` from the products' states."""
    row.products_completed = sum(1 for p in row.products if p["status"] == "completed")
    row.products_failed = sum(1 for p in row.products if p["status"] == "failed")


def mark_item(
    row: EnrichmentJob,
    index: int,
    item: str,
    *,
    value: Any = None,
    method: str | None = None,
    image: dict[str, Any] | None = None,
    error: str | None = None,
    price: int = 0,
) -> bool:
    """Record one item of product ``index`` as delivered (``value`` or ``image``) or failed
    (``error``). Idempotent: an item already recorded is left alone (False), except that a
    delivery replaces an earlier failure of the same item (a resumed run's retry)."""
    products = copy.deepcopy(row.products)
    if not 0 <= index < len(products):
        return False
    p = products[index]
    retried = [e for e in p["errors"] if e["enrichment"] == item]
    if item not in p["pending"]:
        # A resumed run retries what an earlier run could not deliver: a delivery replaces
        # the earlier failure (its price was just captured); anything else is a repeat.
        if error is not None or not retried:
            return False
        p["errors"] = [e for e in p["errors"] if e["enrichment"] != item]
        p["pending"].append(item)
    total = len(p["pending"]) + len(p["result"]) + len(p["images"]) + len(p["errors"])
    p["pending"].remove(item)
    if error is not None:
        p["errors"].append({"enrichment": item, "error": error[:500]})
    elif image is not None:
        p["images"].append(image)
    else:
        p["result"][item] = value
    if method:
        p["method"] = method
    p["credits_used"] = int(p["credits_used"]) + price
    p["status"] = _product_status(p, total)
    row.products = products  # a new value: the JSON column is written
    row.credits_used += price
    row.updated_at = utcnow()
    recount(row)
    return True


def fail_pending(row: EnrichmentJob, reason: str) -> None:
    """Every item still pending failed with ``reason`` (the job ended before it ran)."""
    for index, p in enumerate(row.products):
        for item in list(p["pending"]):
            mark_item(row, index, item, error=reason)


def locked_row(session: Session, job_id: str) -> EnrichmentJob | None:
    return session.scalar(
        select(EnrichmentJob).where(EnrichmentJob.job_id == job_id).with_for_update()
    )


# ---- the kind -----------------------------------------------------------------------------


class _Memo:
    """One computation per product and run; a failure is remembered and raised again."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._errors: dict[str, Exception] = {}

    def get(self, key: str, fn: Callable[[], T]) -> T:
        if key in self._errors:
            raise self._errors[key]
        if key not in self._values:
            try:
                self._values[key] = fn()
            except Exception as exc:
                self._errors[key] = exc
                raise
        value: T = self._values[key]
        return value


@dataclass
class _ProductWork:
    kind: EnrichmentKind
    claim: Claim
    product: dict[str, Any]
    text_fields: list[str]
    memo: _Memo = field(default_factory=_Memo)

    def image(self) -> ImageArray:
        return self.memo.get("image", self._load_image)

    def _load_image(self) -> ImageArray:
        source = self.product.get("source") or {}
        kind, value = source.get("kind"), str(source.get("value") or "")
        reader = self.kind.reader
        try:
            if kind == "url":
                max_bytes = int(
                    self.claim.params.get("max_bytes") or reader.settings.max_upload_bytes
                )
                data = reader.read(ImageSource("url", value), max_bytes)
                return reader.decode_stored(data).pixels
            if kind == "stored":
                return load_image(reader, self.kind.inputs, value).pixels
        except (ImageInputError, FileNotFoundError) as exc:
            raise EngineError(f"the image could not be read: {exc}") from exc
        except Exception as exc:  # AppError from the fetch (refused, too large, 4xx...)
            raise EngineError(f"the image could not be fetched: {exc}") from exc
        raise EngineError("this product has no image")

    def has_image(self) -> bool:
        return bool((self.product.get("source") or {}).get("kind"))

    def text(self) -> EngineResult:
        return self.memo.get("text", self._write_text)

    def _write_text(self) -> EngineResult:
        pixels = self.image() if self.has_image() else None
        engine = self.kind.text_engine()
        params = engine.Params.model_validate(
            {
                "title": self.product["title"],
                "description": self.product.get("description") or "",
                "tags": self.product.get("tags") or [],
                "fields": self.text_fields,
                "use_image": pixels is not None,
            }
        )
        engine.validate(params)
        inputs = EngineInputs(pixels) if pixels is not None else EngineInputs.none()
        return engine.run(inputs, params)

    def text_file(self, item: str, label: str) -> OutputFile:
        result = self.text()
        value = result.details.get(item)
        if value is None:
            raise EngineError(f"the text engine wrote no {item}")
        method = str(result.details.get("method") or "")
        doc = {"product_id": self.product["id"], "field": item, "value": value, "method": method}
        content = json.dumps(doc, ensure_ascii=False).encode()
        return OutputFile(
            content, "application/json", "json", label, data={"value": value, "method": method}
        )

    def image_output(self, item: str, op: Mapping[str, Any]) -> OutputImage:
        pixels = self.image()
        if item.startswith("scenes:"):
            planned = self.memo.get("scenes", lambda: self._plan_scenes(pixels, op))
            return planned[int(item.split(":", 1)[1])].render()
        engine = engine_for(self.kind.engines, CATALOG[IMAGE_OPERATIONS[item]])
        raw: dict[str, Any] = {"scale": int(op.get("scale", 2))} if item == "upscale" else {}
        params = engine.Params.model_validate(raw)
        engine.validate(params)
        out = engine.run(EngineInputs(pixels), params).primary
        if out is None:
            raise EngineError(f"{item} produced no image")
        return out

    def _plan_scenes(self, pixels: ImageArray, op: Mapping[str, Any]) -> list[PlannedImage]:
        engine = multi_image_engine_for(self.kind.engines, CATALOG["scenes"])
        params = ScenesParams(
            num_scenes=int(op.get("count", 1)),
            category=str(self.product.get("category") or "other"),
            seed=self.claim.seed,
            size=self.kind.scene_size,
        )
        engine.load()
        return engine.plan(EngineInputs(pixels), params)


@dataclass(frozen=True)
class EnrichmentKind:
    """The ``enrichment`` job kind (see the module docstring)."""

    db: Database
    engines: Mapping[str, Engine]
    reader: InputReader
    inputs: ObjectStorage
    scene_size: int = 1024
    result_format: str = "png"
    subject: str = "products"

    def text_engine(self) -> Engine:
        return engine_for(self.engines, CATALOG["product_text"])

    def plan(self, claim: Claim) -> list[Planned]:
        params = claim.params
        enrichments = [str(e) for e in params.get("enrichments", [])]
        image_ops: list[dict[str, Any]] = list(params.get("image_operations", []))
        names = item_names(enrichments, image_ops)
        text_fields: list[str] = [n for n in names if n in TEXT_FIELDS]
        planned: list[Planned] = []
        for index, product in enumerate(params.get("products", [])):
            work = _ProductWork(self, claim, product, text_fields)
            for k, item in enumerate(names):
                position = index * SLOTS + k
                label = f"{index}:{item}"
                price = item_price(item, image_ops)
                if item in TEXT_FIELDS:
                    render_file = self._guard(
                        claim, index, item, partial(work.text_file, item, label)
                    )
                    planned.append(PlannedFile(position, label, render_file, price))
                else:
                    op = next((o for o in image_ops if item.split(":", 1)[0] == o["operation"]), {})
                    render_image = self._guard(
                        claim, index, item, partial(work.image_output, item, op)
                    )
                    planned.append(PlannedImage(position, label, render_image, price))
        return planned

    def _guard(
        self, claim: Claim, index: int, item: str, render: Callable[[], T]
    ) -> Callable[[], T]:
        """``render``, with a failure written into the product's entry (fenced by the run's
        token) and raised as an :class:`EngineError`, which the runner counts as a failure."""

        def guarded() -> T:
            try:
                return render()
            except Exception as exc:
                reason = str(exc) or type(exc).__name__
                if not isinstance(exc, EngineError | ValueError):
                    log.warning("enrichment %s: %s failed", claim.job_id, item, exc_info=exc)
                self._write_failure(claim, index, item, reason)
                raise EngineError(reason) from exc

        return guarded

    def _write_failure(self, claim: Claim, index: int, item: str, reason: str) -> None:
        with self.db.transaction() as session:
            if not jobs.owns(session, claim, lock=True):
                return
            row = locked_row(session, claim.job_id)
            if row is not None:
                mark_item(row, index, item, error=reason)

    def record(self, session: Session, claim: Claim, rendered: Rendered) -> None:
        row = locked_row(session, claim.job_id)
        if row is None:
            return
        index, item = parse_label(rendered.label)
        price = rendered.price or 0
        if isinstance(rendered.output, OutputFile):
            data = rendered.output.data
            mark_item(
                row, index, item, value=data.get("value"), method=data.get("method"), price=price
            )
        else:
            image = {"operation": item.split(":", 1)[0], "label": item, "key": rendered.key}
            mark_item(row, index, item, image=image, price=price)
