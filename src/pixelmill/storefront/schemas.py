"""Request and response models of the storefront surface (``/api/v2/shopify/...``). The spec
names the endpoints and the updatable attributes but not the bodies; the shapes chosen here are
documented in docs/storefront.md."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from pixelmill.schemas import Schema, Timestamp

ActivityType = Literal["enrichment", "description", "images", "tags"]
Status = Literal["pending", "processing", "completed", "failed"]
Enrichment = Literal["description", "tags", "alt_text", "images"]
ImageOperationName = Literal["remove_background", "upscale", "scenes"]
RunBy = Literal["server", "app"]

MAX_PRODUCTS = 50
DEFAULT_ENRICHMENTS: tuple[Enrichment, ...] = ("description", "tags", "alt_text")

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def normalise_shop_domain(value: str) -> str:
    """``value`` as a lower-case host name (``demo.myshopify.com``): at least two labels of
    letters, digits and inner hyphens, 253 characters at most, no scheme, port, path or IP
    address. Raises ``ValueError`` otherwise."""
    host = value.strip().lower().rstrip(".")
    labels = host.split(".")
    if (
        not host
        or len(host) > 253
        or len(labels) < 2
        or not all(_LABEL.match(label) for label in labels)
        or labels[-1].isdigit()
    ):
        raise ValueError("shop_domain must be a host name such as demo.myshopify.com")
    return host


class _ShopScoped(BaseModel):
    shop_domain: str = Field(
        min_length=1, max_length=253, description="the shop's host name (demo.myshopify.com)"
    )

    @field_validator("shop_domain")
    @classmethod
    def _host(cls, value: str) -> str:
        return normalise_shop_domain(value)


# ---- activities ---------------------------------------------------------------------------


class Change(BaseModel):
    field: str = Field(min_length=1, max_length=64, description="description, tags, alt_text...")
    before: Any = Field(None, description="the value before (any JSON)")
    after: Any = Field(None, description="the value after (any JSON)")


class ActivityProduct(BaseModel):
    id: str = Field(min_length=1, max_length=255, description="the shop's product id")
    title: str = Field("", max_length=500)
    changes: list[Change] = Field(default_factory=list, max_length=50)


class ActivityCreate(_ShopScoped):
    activity_type: ActivityType
    status: Status = "completed"
    products: list[ActivityProduct] = Field(default_factory=list, max_length=250)
    credits_used: int = Field(0, ge=0, le=1_000_000, description="as the app reports it")
    error_message: str | None = Field(None, max_length=4000)
    job_id: int | None = Field(
        None, ge=1, le=2**31 - 1, description="the enrichment job this reports, if any"
    )


class ActivityProductSummary(BaseModel):
    id: str
    title: str
    fields: list[str] = Field(description="the fields that changed")


class ActivityOut(Schema):
    """An activity as listed: the products without their before/after values."""

    id: int
    shop_domain: str
    activity_type: str
    status: str
    products_count: int
    credits_used: int
    error_message: str | None
    job_id: int | None
    created_at: Timestamp
    updated_at: Timestamp
    products: list[ActivityProductSummary]


class ActivityDetail(ActivityOut):
    """An activity with the full change details of every product."""

    products: list[ActivityProduct]  # type: ignore[assignment]


class ActivityList(BaseModel):
    activities: list[ActivityOut]
    total: int
    page: int
    per_page: int
    pages: int


class ActivitySummary(BaseModel):
    shop_domain: str | None
    completed_activities: int = Field(description="activities with status completed")
    products_processed: int = Field(description="products of the completed activities")
    image_jobs: int = Field(description="completed activities that touched images")
    failed_activities: int
    credits_used: int = Field(description="sum over the completed activities")
    by_type: dict[str, int] = Field(description="completed activities per activity_type")


# ---- enrichment jobs ----------------------------------------------------------------------


class ImageOperation(BaseModel):
    """One image enrichment: ``remove_background`` (a transparent PNG cut-out),
    ``upscale`` (``scale`` 2 or 4), ``scenes`` (``count`` product photos in generated scenes)."""

    operation: ImageOperationName
    scale: Literal[2, 4] = Field(2, description="upscale only")
    count: int = Field(1, ge=1, le=4, description="scenes only: how many scenes")


class EnrichmentProduct(BaseModel):
    """A product given inline (its text and one image source) or by library UUID."""

    id: str = Field(min_length=1, max_length=255, description="the shop's product id")
    title: str | None = Field(None, max_length=255)
    description: str = Field("", max_length=20000)
    tags: list[str] = Field(default_factory=list, max_length=250)
    image_url: str | None = Field(None, max_length=4096, description="public http(s) URL")
    image_base64: str | None = Field(None, description="the image as base64")
    product_uuid: str | None = Field(
        None, description="a product saved with POST /api/v2/products (its image and name)"
    )

    @model_validator(mode="after")
    def _one_source(self) -> EnrichmentProduct:
        sources = [s for s in (self.image_url, self.image_base64, self.product_uuid) if s]
        if len(sources) > 1:
            raise ValueError("give at most one of image_url, image_base64, product_uuid")
        if not self.product_uuid and not (self.title and self.title.strip()):
            raise ValueError("title is required unless product_uuid is given")
        return self


class EnrichmentJobCreate(_ShopScoped):
    products: list[EnrichmentProduct] = Field(min_length=1, max_length=MAX_PRODUCTS)
    enrichments: list[Enrichment] = Field(
        default_factory=lambda: list(DEFAULT_ENRICHMENTS), min_length=1
    )
    image_operations: list[ImageOperation] | None = Field(
        None,
        max_length=3,
        description="with images: what to do to each image; default [remove_background]",
    )
    run_by: RunBy = Field(
        "server",
        description="server: the server does the work and charges per delivered result; "
        "app: the app records a job it runs itself and reports it with PATCH (free)",
    )
    webhook_url: str | None = Field(None, description="enrichment_job.completed / .failed")

    @model_validator(mode="after")
    def _consistent(self) -> EnrichmentJobCreate:
        self.enrichments = list(dict.fromkeys(self.enrichments))
        ids = [p.id for p in self.products]
        if len(set(ids)) != len(ids):
            raise ValueError("product ids must be unique within a job")
        if self.image_operations is not None and "images" not in self.enrichments:
            raise ValueError("image_operations needs images in enrichments")
        if "images" in self.enrichments:
            ops = self.image_operations or [ImageOperation(operation="remove_background")]
            if len({o.operation for o in ops}) != len(ops):
                raise ValueError("each image operation may be given once")
            self.image_operations = ops
            if self.run_by == "server":
                missing = [
                    p.id
                    for p in self.products
                    if not (p.image_url or p.image_base64 or p.product_uuid)
                ]
                if missing:
                    raise ValueError(f"images needs an image for every product; none for {missing}")
        else:
            self.image_operations = []
        return self


class EnrichmentJobCreated(BaseModel):
    job_id: int
    status: str
    run_by: str
    products_total: int
    credits_reserved: int
    credits_remaining: int
    poll_url: str


class ProductImageOut(BaseModel):
    operation: str
    label: str
    url: str


class ProductErrorOut(BaseModel):
    enrichment: str
    error: str


class ProductResultOut(BaseModel):
    id: str
    title: str
    status: str = Field(description="pending, processing, completed or failed")
    description: str | None = None
    tags: list[str] | None = None
    alt_text: str | None = None
    images: list[ProductImageOut] = Field(default_factory=list)
    errors: list[ProductErrorOut] = Field(default_factory=list)
    method: str | None = Field(None, description="how the text was written")
    credits_used: int = 0


class EnrichmentJobOut(BaseModel):
    job_id: int
    shop_domain: str
    status: str
    run_by: str
    enrichments: list[str]
    image_operations: list[dict[str, Any]]
    products_total: int
    products_completed: int
    products_failed: int
    credits_reserved: int
    credits_used: int
    error_message: str | None
    results_json: str | None = Field(
        description="app-run jobs: what the app reported; server-run jobs: the results as JSON"
    )
    activity_id: int | None
    poll_url: str
    created_at: Timestamp
    updated_at: Timestamp
    completed_at: Timestamp | None


class EnrichmentJobDetail(EnrichmentJobOut):
    results: list[ProductResultOut]


class EnrichmentJobList(BaseModel):
    jobs: list[EnrichmentJobOut]
    total: int
    limit: int


class JobDeleted(BaseModel):
    job_id: int
    deleted: bool
    files_deleted: int
    credits_released: int
