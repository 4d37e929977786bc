"""The v2 library: products (``/api/v2/products``) and avatars (``/api/v2/avatars``)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from pixelmill import idempotency
from pixelmill.api.deps import ApiKeyUser, DbSession, Res
from pixelmill.api.files import signed_file
from pixelmill.api.rendering import public_base_url
from pixelmill.db.models import Avatar, Product
from pixelmill.library import service
from pixelmill.library.analysis import add_product
from pixelmill.library.describe import describe
from pixelmill.library.images import library_url, save_image
from pixelmill.operations.pipeline import ImageSource
from pixelmill.resources import Resources

router = APIRouter(prefix="/api/v2", tags=["v2 library"])
# Signed, expiring links are their own credential (like /files/ results).
files_router = APIRouter(tags=["files"])


class ProductCreate(BaseModel):
    image: str = Field(min_length=1, description="the product image as plain base64")
    filename: str = Field("product.png", max_length=255)
    name: str | None = Field(None, max_length=255, description="default: the file name")
    category: str | None = Field(
        None, description="default: other; " + ", ".join(service.CATEGORIES)
    )
    description: str | None = Field(None, max_length=5000, description="default: measured")


class ProductOut(BaseModel):
    """A product of the library."""

    uuid: str
    name: str
    filename: str
    category: str
    description: str
    image_url: str = Field(description="signed, expiring URL of the saved image")
    width: int
    height: int
    created_at: str


class AvatarOut(BaseModel):
    uuid: str
    name: str
    gender: str
    image_url: str
    created_at: str


def product_body(resources: Resources, base_url: str, product: Product) -> dict[str, Any]:
    return {
        "uuid": product.id,
        "name": product.name,
        "filename": product.filename,
        "category": product.category,
        "description": product.description,
        "image_url": library_url(resources, base_url, product.image_key),
        "width": product.width,
        "height": product.height,
        "created_at": product.created_at.isoformat().replace("+00:00", "Z"),
    }


def avatar_body(resources: Resources, base_url: str, avatar: Avatar) -> dict[str, Any]:
    return {
        "uuid": avatar.id,
        "name": avatar.name,
        "gender": avatar.gender,
        "image_url": library_url(resources, base_url, avatar.image_key),
        "created_at": avatar.created_at.isoformat().replace("+00:00", "Z"),
    }


def _stem(filename: str) -> str:
    name = filename.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name else name


@router.post("/products", status_code=201, responses={201: {"model": ProductOut}})
async def create_product(
    body: ProductCreate, user: ApiKeyUser, resources: Res, request: Request
) -> JSONResponse:
    """Save a product image to the library (free). When category or description are not
    given, the response carries quick measured values (category ``other``, colours and size)
    and the analysis engine refines them in the background. Honours ``Idempotency-Key``."""
    attempt = idempotency.begin(
        resources.db,
        user.id,
        request.headers.get("Idempotency-Key"),
        request.url.path,
        body.model_dump(),
    )
    if attempt.stored is not None:
        return JSONResponse(attempt.stored.body, status_code=attempt.stored.status_code)
    product_id = str(uuid.uuid4())
    saved = await save_image(
        resources, ImageSource("base64", body.image), user, "products", product_id
    )
    # CPU work: off the event loop.
    description: str = body.description or ""
    if not description:
        description = await asyncio.to_thread(describe, saved.image.pixels)
    base_url = public_base_url(request, resources)

    def create(session: Session) -> dict[str, Any]:
        product = add_product(
            session,
            resources,
            user.id,
            saved,
            product_id=product_id,
            name=body.name or _stem(body.filename) or "product",
            filename=body.filename,
            category=body.category,
            description=description,
            description_given=bool(body.description),
        )
        payload = product_body(resources, base_url, product)
        attempt.save(session, 201, payload)
        return payload

    return JSONResponse(await resources.db.transact(create), status_code=201)


@router.get("/products", response_model=list[ProductOut])
def list_products(
    user: ApiKeyUser, resources: Res, request: Request, category: str | None = None
) -> list[dict[str, Any]]:
    """The account's products, newest first (``?category=`` filters)."""
    base = public_base_url(request, resources)
    with resources.db.read() as session:
        products = service.list_products(session, user.id, category)
    return [product_body(resources, base, p) for p in products]


@router.get("/products/{product_uuid}", response_model=ProductOut)
def get_product(
    product_uuid: str, user: ApiKeyUser, resources: Res, request: Request
) -> dict[str, Any]:
    """One product of the account."""
    with resources.db.read() as session:
        product = service.get_product(session, user.id, product_uuid)
    return product_body(resources, public_base_url(request, resources), product)


@router.delete("/products/{product_uuid}")
def delete_product(product_uuid: str, user: ApiKeyUser, session: DbSession) -> dict[str, Any]:
    """Soft delete: the product leaves lists and reads; jobs that used it keep working."""
    service.delete_product(session, user.id, product_uuid)
    return {"uuid": product_uuid, "deleted": True}


@router.get("/avatars", response_model=list[AvatarOut])
def list_avatars(user: ApiKeyUser, resources: Res, request: Request) -> list[dict[str, Any]]:
    """The account's avatars (empty until avatars can be created on this server)."""
    base = public_base_url(request, resources)
    with resources.db.read() as session:
        avatars = service.list_avatars(session, user.id)
    return [avatar_body(resources, base, a) for a in avatars]


@router.get("/avatars/{avatar_uuid}", response_model=AvatarOut)
def get_avatar(
    avatar_uuid: str, user: ApiKeyUser, resources: Res, request: Request
) -> dict[str, Any]:
    """One avatar of the account."""
    with resources.db.read() as session:
        avatar = service.get_avatar(session, user.id, avatar_uuid)
    return avatar_body(resources, public_base_url(request, resources), avatar)


@files_router.get("/files/library/{key:path}", response_class=Response)
def library_file(key: str, exp: int, sig: str, resources: Res) -> Response:
    """A library image (product or avatar) behind a signed, expiring URL."""
    return signed_file(resources.signer, resources.library_storage, key, exp, sig)
