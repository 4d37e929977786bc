"""Request and response models of the v2 library (products and avatars)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from pixelmill.categories import LIBRARY_CATEGORIES
from pixelmill.db.models import Avatar, Product
from pixelmill.library.images import library_url
from pixelmill.schemas import Schema, Timestamp
from pixelmill.storage import UrlSigner


class ProductCreate(BaseModel):
    image: str = Field(min_length=1, description="the product image as plain base64")
    filename: str = Field("product.png", max_length=255)
    name: str | None = Field(None, max_length=255, description="default: the file name")
    category: str | None = Field(
        None, description="default: other; " + ", ".join(LIBRARY_CATEGORIES)
    )
    description: str | None = Field(None, max_length=5000, description="default: measured")
    brand: str | None = Field(None, max_length=255)
    status: Literal["active", "draft", "archived"] = Field(
        "active", description="the JWT catalog's filter"
    )
    collection_id: int | None = Field(
        None, ge=1, le=2**31 - 1, description="a collection of the JWT catalog"
    )


class ProductOut(Schema):
    """A product of the library."""

    uuid: str = Field(validation_alias="id")
    name: str
    filename: str
    category: str
    description: str
    image_url: str = Field(description="signed, expiring URL of the saved image")
    width: int
    height: int
    brand: str | None = None
    status: str = "active"
    collection_id: int | None = None
    created_at: Timestamp


class AvatarOut(Schema):
    """An avatar of the library (generated, or saved from a photo)."""

    uuid: str = Field(validation_alias="id")
    name: str
    gender: str
    kind: str = Field(description="guided (drawn from a prompt) or reference (from a photo)")
    image_url: str = Field(description="signed, expiring URL of the avatar image")
    created_at: Timestamp


class ProductDeleted(BaseModel):
    uuid: str
    deleted: bool = True


def product_out(signer: UrlSigner, base_url: str, product: Product) -> ProductOut:
    return ProductOut.from_row(product, image_url=library_url(signer, base_url, product.image_key))


def avatar_out(signer: UrlSigner, base_url: str, avatar: Avatar) -> AvatarOut:
    return AvatarOut.from_row(avatar, image_url=library_url(signer, base_url, avatar.image_key))
