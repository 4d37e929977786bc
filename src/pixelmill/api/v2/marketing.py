"""v2 talking videos: ``POST /api/v2/generate/video`` (50 credits, 202 with an integer
``job_id``) and its poll ``GET /api/v2/jobs/video/{job_id}``."""

from __future__ import annotations

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse

from pixelmill.api.deps import ApiKeyUser, BaseUrl, ReadSession, Res
from pixelmill.api.idempotent import idempotent_create
from pixelmill.marketing import service as marketing
from pixelmill.marketing.requests import VideoRequest
from pixelmill.marketing.schemas import VideoCreate, VideoJobCreated, VideoJobStatus

router = APIRouter(prefix="/api/v2", tags=["v2 generation"])

JobNumber = Path(ge=1, le=2**31 - 1, description="the integer id from the create response")


@router.post("/generate/video", status_code=202, responses={202: {"model": VideoJobCreated}})
async def generate_video(
    body: VideoCreate, user: ApiKeyUser, resources: Res, request: Request, base_url: BaseUrl
) -> JSONResponse:
    """A short talking video from one still image: a face talks (jaw and lips driven by the
    voice's loudness, blinks, head sway), a product gets camera moves with parallax; an offline
    voice speaks ``script`` (an empty script is written for ``duration`` seconds from the
    image's facts); MP4 (H.264 + AAC) in 9:16, 1:1 or 16:9. 50 credits, reserved now and
    returned if the video fails. Poll ``GET /api/v2/jobs/video/{job_id}``. Honours
    ``Idempotency-Key``."""
    create = VideoRequest(resources, user, base_url, body=body)
    return await idempotent_create(request, resources.db, user, body, 202, create)


@router.get("/jobs/video/{job_id}", response_model=VideoJobStatus)
def get_video_job(
    user: ApiKeyUser,
    resources: Res,
    session: ReadSession,
    base_url: BaseUrl,
    job_id: int = JobNumber,
) -> VideoJobStatus:
    """A video job: ``status`` pending, processing, completed or failed; ``video_url`` (a
    signed, expiring link to the MP4) once completed; ``error_message`` when failed."""
    return marketing.video_status(session, resources.signer, user.id, job_id, base_url)
