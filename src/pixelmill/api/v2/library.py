"""The v2 library: products (``/api/v2/products``) and avatars (``/api/v2/avatars``)."""

from __future__ import annotations

import asyncio
import uuid

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from sqlalchemy.orm import Session

from pixelmill.api.deps import ApiKeyUser, DbSession, Res
from pixelmill.api.files import signed_file
from pixelmill.api.idempotent import Closures, idempotent_create
from pixelmill.api.rendering import public_base_url
from pixelmill.db.models import Avatar, Product
from pixelmill.engines.avatar import gallery_model
from pixelmill.errors import NotFound
from pixelmill.generation import gallery
from pixelmill.generation.gallery import GalleryAvatar
from pixelmill.generation.people import avatar_engine
from pixelmill.library import service
from pixelmill.library.describe import describe
from pixelmill.library.images import SavedImage, library_url, save_image
from pixelmill.library.schemas import AvatarOut, ProductCreate, ProductDeleted, ProductOut
from pixelmill.operations.inputs import ImageSource
from pixelmill.storage import UrlSigner

router = APIRouter(prefix="/api/v2", tags=["v2 library"])
# Signed, expiring links are their own credential (like /files/ results).
files_router = APIRouter(tags=["files"])


def product_out(signer: UrlSigner, base_url: str, product: Product) -> ProductOut:
    return ProductOut.from_row(product, image_url=library_url(signer, base_url, product.image_key))


def avatar_out(signer: UrlSigner, base_url: str, avatar: Avatar) -> AvatarOut:
    return AvatarOut.from_row(avatar, image_url=library_url(signer, base_url, avatar.image_key))


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
    product_id = str(uuid.uuid4())
    base_url = public_base_url(request, resources)

    async def prepare() -> tuple[SavedImage, str]:
        source = ImageSource("base64", body.image)
        saved = await save_image(
            resources.inputs, resources.library_storage, source, user, "products", product_id
        )
        description: str = body.description or ""
        if not description:
            # CPU work: off the event loop.
            description = await asyncio.to_thread(describe, saved.image.pixels)
        return saved, description

    def create(session: Session, prepared: tuple[SavedImage, str]) -> ProductOut:
        saved, description = prepared
        product = service.add_product(
            session,
            resources.queue,
            user.id,
            saved,
            analyze=resources.settings.analyze_products,
            product_id=product_id,
            name=body.name or _stem(body.filename) or "product",
            filename=body.filename,
            category=body.category,
            description=description,
            description_given=bool(body.description),
            brand=body.brand,
            status=body.status,
            collection_id=body.collection_id,
        )
        return product_out(resources.signer, base_url, product)

    def discard(prepared: tuple[SavedImage, str]) -> None:
        resources.library_storage.delete(prepared[0].key)

    return await idempotent_create(
        request, resources.db, user, body, 201, Closures(prepare, create, discard)
    )


@router.get("/products", response_model=list[ProductOut])
def list_products(
    user: ApiKeyUser, resources: Res, request: Request, category: str | None = None
) -> list[ProductOut]:
    """The account's products, newest first (``?category=`` filters)."""
    base = public_base_url(request, resources)
    with resources.db.read() as session:
        products = service.list_products(session, user.id, category)
    return [product_out(resources.signer, base, p) for p in products]


@router.get("/products/{product_uuid}", response_model=ProductOut)
def get_product(
    product_uuid: str, user: ApiKeyUser, resources: Res, request: Request
) -> ProductOut:
    """One product of the account."""
    with resources.db.read() as session:
        product = service.get_product(session, user.id, product_uuid)
    return product_out(resources.signer, public_base_url(request, resources), product)


@router.delete("/products/{product_uuid}", response_model=ProductDeleted)
def delete_product(product_uuid: str, user: ApiKeyUser, session: DbSession) -> ProductDeleted:
    """Soft delete: the product leaves lists and reads; jobs that used it keep working."""
    service.delete_product(session, user.id, product_uuid)
    return ProductDeleted(uuid=product_uuid)


@router.get("/avatars", response_model=list[AvatarOut])
def list_avatars(user: ApiKeyUser, resources: Res, request: Request) -> list[AvatarOut]:
    """The account's avatars (empty until avatars can be created on this server)."""
    base = public_base_url(request, resources)
    with resources.db.read() as session:
        avatars = service.list_avatars(session, user.id)
    return [avatar_out(resources.signer, base, a) for a in avatars]


@router.get("/avatars/public", response_model=list[GalleryAvatar])
def list_public_avatars(user: ApiKeyUser, resources: Res, request: Request) -> list[GalleryAvatar]:
    """The public gallery: models any account can use. Their ``id`` is what ``model_id``
    names; ``image_url`` shows each (no key needed)."""
    base = public_base_url(request, resources)
    return [GalleryAvatar.of(model, base) for model in gallery.gallery()]


@files_router.get("/api/v2/avatars/public/{model_id}.png", response_class=Response)
async def public_avatar_image(model_id: str, resources: Res) -> Response:
    """A public model's image (drawn once, then served from the library store)."""
    model = gallery_model(model_id)
    if model is None:
        raise NotFound("Public model not found")
    engine = avatar_engine(resources, "guided")
    data = await resources.pipeline.run_free(
        gallery.gallery_image, engine, resources.library_storage, model
    )
    return Response(
        data, media_type="image/png", headers={"Cache-Control": "public, max-age=86400"}
    )


@router.get("/avatars/{avatar_uuid}", response_model=AvatarOut)
def get_avatar(avatar_uuid: str, user: ApiKeyUser, resources: Res, request: Request) -> AvatarOut:
    """One avatar of the account."""
    with resources.db.read() as session:
        avatar = service.get_avatar(session, user.id, avatar_uuid)
    return avatar_out(resources.signer, public_base_url(request, resources), avatar)


@files_router.get("/files/library/{key:path}", response_class=Response)
def library_file(key: str, exp: int, sig: str, resources: Res) -> Response:
    """A library image (product or avatar) behind a signed, expiring URL."""
    return signed_file(resources.signer, resources.library_storage, key, exp, sig)
