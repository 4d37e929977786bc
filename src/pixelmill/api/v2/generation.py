"""v2 asynchronous generation: scene jobs (``/api/v2/generate/scenes`` and
``/api/v2/generate/scenes-from-url``; poll ``GET /api/v2/jobs/{job_id}``) and avatars
(``/api/v2/generate/avatar``; poll ``GET /api/v2/jobs/avatar/{job_id}``). Creates answer 202
with ``job_id``, ``status``, ``poll_url`` and ``credits_reserved``; each is one call of its
request in ``generation/requests.py``."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from pixelmill.api.deps import ApiKeyUser, BaseUrl, ReadSession, Res
from pixelmill.api.idempotent import idempotent_create
from pixelmill.generation import service as generation
from pixelmill.generation.requests import (
    AvatarRequest,
    PeopleRequest,
    ScenesFromUrlRequest,
    ScenesRequest,
)
from pixelmill.generation.schemas import (
    AvatarCreate,
    AvatarJobCreated,
    AvatarJobStatus,
    AvatarPhotoCreate,
)
from pixelmill.jobs.schemas import JobCreated, ScenesCreate, ScenesFromUrlCreate

router = APIRouter(prefix="/api/v2", tags=["v2 generation"])


@router.post("/generate/scenes", status_code=202, responses={202: {"model": JobCreated}})
async def generate_scenes(
    body: ScenesCreate, user: ApiKeyUser, resources: Res, base_url: BaseUrl, request: Request
) -> JSONResponse:
    """Product photos in procedurally generated scenes for a saved product; 1 credit per scene,
    reserved now, unused credits returned when the job ends. Honours ``Idempotency-Key``."""
    create = ScenesRequest(resources, user, base_url, body=body)
    return await idempotent_create(request, resources.db, user, body, 202, create)


@router.post("/generate/scenes-from-url", status_code=202, responses={202: {"model": JobCreated}})
async def generate_scenes_from_url(
    body: ScenesFromUrlCreate,
    user: ApiKeyUser,
    resources: Res,
    base_url: BaseUrl,
    request: Request,
) -> JSONResponse:
    """Fetch the image (SSRF-guarded), save it as a product, start a scene job; 1 credit per
    scene. Honours ``Idempotency-Key``."""
    create = ScenesFromUrlRequest(resources, user, base_url, body=body)
    return await idempotent_create(request, resources.db, user, body, 202, create)


@router.post("/generate/product-photo", status_code=202, responses={202: {"model": JobCreated}})
async def generate_product_photo(
    body: AvatarPhotoCreate, user: ApiKeyUser, resources: Res, base_url: BaseUrl, request: Request
) -> JSONResponse:
    """The product held by, or placed beside, a saved avatar in ``num_outputs`` scenes chosen
    from the prompt's keywords; 1 credit per image, reserved now, unused credits returned when
    the job ends. Poll ``GET /api/v2/jobs/{job_id}``. Honours ``Idempotency-Key``."""
    create = PeopleRequest(resources, user, base_url, kind="product_photo", body=body)
    return await idempotent_create(request, resources.db, user, body, 202, create)


@router.post("/generate/tryon", status_code=202, responses={202: {"model": JobCreated}})
async def generate_tryon(
    body: AvatarPhotoCreate, user: ApiKeyUser, resources: Res, base_url: BaseUrl, request: Request
) -> JSONResponse:
    """Virtual try-on of a clothing product on a saved avatar (a non-clothing product is a
    422, nothing charged); 1 credit per image. Poll ``GET /api/v2/jobs/{job_id}``. Honours
    ``Idempotency-Key``."""
    create = PeopleRequest(resources, user, base_url, kind="tryon", body=body)
    return await idempotent_create(request, resources.db, user, body, 202, create)


@router.post("/generate/avatar", status_code=202, responses={202: {"model": AvatarJobCreated}})
async def generate_avatar(
    body: AvatarCreate, user: ApiKeyUser, resources: Res, base_url: BaseUrl, request: Request
) -> JSONResponse:
    """Avatars on the job machinery, 1 credit each: ``guided`` draws people from ``prompt`` and
    ``characteristics``; ``reference`` turns the person in a photo into studio avatars (a photo
    with no person is a 422, nothing charged). Poll ``GET /api/v2/jobs/avatar/{job_id}``; the
    avatars also appear in ``GET /api/v2/avatars``. Honours ``Idempotency-Key``."""
    create = AvatarRequest(resources, user, base_url, body=body)
    return await idempotent_create(request, resources.db, user, body, 202, create)


@router.get("/jobs/avatar/{job_id}", response_model=AvatarJobStatus)
def get_avatar_job(
    job_id: str, user: ApiKeyUser, resources: Res, base_url: BaseUrl, session: ReadSession
) -> AvatarJobStatus:
    """An avatar job's status, progress and results, and the avatars it saved."""
    return generation.avatar_job_status(session, resources.signer, user.id, job_id, base_url)
