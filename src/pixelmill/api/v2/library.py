"""The v2 library: products (``/api/v2/products``) and avatars (``/api/v2/avatars``)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from pixelmill.api.deps import ApiKeyUser, BaseUrl, DbSession, ReadSession, Res
from pixelmill.api.files import signed_file
from pixelmill.api.idempotent import idempotent_create
from pixelmill.engines.avatar import gallery_model
from pixelmill.errors import NotFound
from pixelmill.generation import gallery
from pixelmill.generation.gallery import GalleryAvatar
from pixelmill.generation.people import avatar_engine
from pixelmill.library import service
from pixelmill.library.requests import ProductRequest
from pixelmill.library.schemas import (
    AvatarOut,
    ProductCreate,
    ProductDeleted,
    ProductOut,
    avatar_out,
    product_out,
)

router = APIRouter(prefix="/api/v2", tags=["v2 library"])
# Signed, expiring links are their own credential (like /files/ results).
files_router = APIRouter(tags=["files"])


@router.post("/products", status_code=201, responses={201: {"model": ProductOut}})
async def create_product(
    body: ProductCreate, user: ApiKeyUser, resources: Res, base_url: BaseUrl, request: Request
) -> JSONResponse:
    """Save a product image to the library (free). When category or description are not
    given, the response carries quick measured values (category ``other``, colours and size)
    and the analysis engine refines them in the background. Honours ``Idempotency-Key``."""
    create = ProductRequest(
        resources.inputs,
        resources.library_storage,
        resources.queue,
        resources.signer,
        resources.settings.analyze_products,
        user,
        base_url,
        body,
    )
    return await idempotent_create(request, resources.db, user, body, 201, create)


@router.get("/products", response_model=list[ProductOut])
def list_products(
    user: ApiKeyUser,
    resources: Res,
    base_url: BaseUrl,
    session: ReadSession,
    category: str | None = None,
) -> list[ProductOut]:
    """The account's products, newest first (``?category=`` filters)."""
    products = service.list_products(session, user.id, category)
    return [product_out(resources.signer, base_url, p) for p in products]


@router.get("/products/{product_uuid}", response_model=ProductOut)
def get_product(
    product_uuid: str, user: ApiKeyUser, resources: Res, base_url: BaseUrl, session: ReadSession
) -> ProductOut:
    """One product of the account."""
    product = service.get_product(session, user.id, product_uuid)
    return product_out(resources.signer, base_url, product)


@router.delete("/products/{product_uuid}", response_model=ProductDeleted)
def delete_product(product_uuid: str, user: ApiKeyUser, session: DbSession) -> ProductDeleted:
    """Soft delete: the product leaves lists and reads; jobs that used it keep working."""
    service.delete_product(session, user.id, product_uuid)
    return ProductDeleted(uuid=product_uuid)


@router.get("/avatars", response_model=list[AvatarOut])
def list_avatars(
    user: ApiKeyUser, resources: Res, base_url: BaseUrl, session: ReadSession
) -> list[AvatarOut]:
    """The account's avatars (empty until avatars can be created on this server)."""
    avatars = service.list_avatars(session, user.id)
    return [avatar_out(resources.signer, base_url, a) for a in avatars]


@router.get("/avatars/public", response_model=list[GalleryAvatar])
def list_public_avatars(user: ApiKeyUser, resources: Res, base_url: BaseUrl) -> list[GalleryAvatar]:
    """The public gallery: models any account can use. Their ``id`` is what ``model_id``
    names; ``image_url`` shows each (no key needed)."""
    return [GalleryAvatar.of(model, base_url) for model in gallery.gallery()]


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
def get_avatar(
    avatar_uuid: str, user: ApiKeyUser, resources: Res, base_url: BaseUrl, session: ReadSession
) -> AvatarOut:
    """One avatar of the account."""
    avatar = service.get_avatar(session, user.id, avatar_uuid)
    return avatar_out(resources.signer, base_url, avatar)


@files_router.get("/files/library/{key:path}", response_class=Response)
def library_file(key: str, exp: int, sig: str, resources: Res) -> Response:
    """A library image (product or avatar) behind a signed, expiring URL."""
    return signed_file(resources.signer, resources.library_storage, key, exp, sig)
