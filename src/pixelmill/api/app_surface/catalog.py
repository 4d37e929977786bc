"""``/api/catalog`` (JWT): the account's library products as a catalog (integer ids, filters,
pages) and silhouette shots of one (``create-silo``, 1 credit per image, through the
pipeline: reserved, captured or released, with a history row)."""

from __future__ import annotations

import asyncio
import math
from functools import partial
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, Field

from pixelmill.api.deps import BaseUrl, JwtUser, ReadSession, Res
from pixelmill.db.models import Product
from pixelmill.engines.silo.engine import MAX_SILOS
from pixelmill.library import catalog
from pixelmill.library.images import library_url, load_image
from pixelmill.schemas import Timestamp
from pixelmill.storage import UrlSigner

router = APIRouter(prefix="/api/catalog", tags=["catalog"])

ProductNumber = Annotated[int, Path(ge=1, le=2**31 - 1, description="the catalog's product id")]


class CatalogProduct(BaseModel):
    id: int = Field(description="the catalog's integer id")
    uuid: str = Field(description="the same product in /api/v2/products")
    name: str
    description: str
    category: str
    brand: str | None
    status: str
    collection_id: int | None
    image_url: str = Field(description="signed, expiring URL of the product image")
    width: int
    height: int
    created_at: Timestamp


class CatalogPage(BaseModel):
    items: list[CatalogProduct]
    total: int = Field(description="products matching the filters, all pages")
    page: int
    page_size: int
    pages: int


class SiloCreate(BaseModel):
    num_images: int = Field(ge=1, le=MAX_SILOS, description="silo shots to make; 1 credit each")
    actor_id: int | None = Field(None, description="accepted for compatibility; not used")
    actor_type: str | None = Field(
        None, max_length=64, description="accepted for compatibility; not used"
    )


class SiloImage(BaseModel):
    label: str = Field(description="the ground and shadow of the shot")
    url: str


class SiloResult(BaseModel):
    success: bool = True
    product_id: int
    images: list[str]
    results: list[SiloImage]
    credits_used: int
    credits_remaining: int | None
    details: dict[str, object]


def _item(signer: UrlSigner, base_url: str, product: Product) -> CatalogProduct:
    assert product.number is not None
    return CatalogProduct(
        id=product.number,
        uuid=product.id,
        name=product.name,
        description=product.description,
        category=product.category,
        brand=product.brand,
        status=product.status,
        collection_id=product.collection_id,
        image_url=library_url(signer, base_url, product.image_key),
        width=product.width,
        height=product.height,
        created_at=product.created_at,
    )


@router.get("", response_model=CatalogPage)
def list_catalog(
    user: JwtUser,
    session: ReadSession,
    resources: Res,
    base_url: BaseUrl,
    page: Annotated[int, Query(ge=1, le=10**6)] = 1,
    page_size: Annotated[int, Query(ge=1, le=100)] = 25,
    search: Annotated[
        str | None, Query(max_length=200, description="name, description, brand")
    ] = None,
    category: Annotated[str | None, Query(max_length=64)] = None,
    brand: Annotated[str | None, Query(max_length=255)] = None,
    status: Annotated[Literal["active", "draft", "archived"] | None, Query()] = None,
    collection_id: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
) -> CatalogPage:
    """The account's products (those saved with ``POST /api/v2/products``), newest first."""
    q = catalog.CatalogQuery(page, page_size, search, category, brand, status, collection_id)
    rows, total = catalog.catalog_page(session, user.id, q)
    items = [_item(resources.signer, base_url, p) for p in rows]
    return CatalogPage(
        items=items,
        total=total,
        page=page,
        page_size=page_size,
        pages=math.ceil(total / page_size) if total else 0,
    )


@router.post("/{product_id}/create-silo", response_model=SiloResult)
async def create_silo(
    product_id: ProductNumber, body: SiloCreate, user: JwtUser, resources: Res, base_url: BaseUrl
) -> SiloResult:
    """``num_images`` silhouette shots of the product: the same margin on each, white and
    neutral grounds, soft contact, drop and reflected shadow variants (the product photo is
    cut out; nothing is generated). A photo with no product found is a 422, nothing
    charged."""
    with resources.db.read() as session:
        product = catalog.get_catalog_product(session, user.id, product_id)
    image = await asyncio.to_thread(
        partial(load_image, resources.inputs, resources.library_storage, product.image_key)
    )
    outcome = await resources.pipeline.run(
        "silo",
        image,
        {"num_outputs": body.num_images},
        user=user,
        surface="catalog",
        base_url=base_url,
    )
    details = dict(outcome.details)
    if body.actor_id is not None or body.actor_type is not None:
        details["unused_fields"] = ["actor_id", "actor_type"]
    return SiloResult(
        product_id=product_id,
        images=[i.url for i in outcome.images],
        results=[SiloImage(label=i.label, url=i.url) for i in outcome.images],
        credits_used=outcome.credits_used,
        credits_remaining=outcome.credits_remaining,
        details=details,
    )
