"""v2 talking videos: ``POST /api/v2/generate/video`` (50 credits, 202 with an integer
``job_id``) and its poll ``GET /api/v2/jobs/video/{job_id}``."""

from __future__ import annotations

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse
from sqlalchemy.orm import Session

from pixelmill.api.deps import ApiKeyUser, Res
from pixelmill.api.idempotent import Closures, idempotent_create
from pixelmill.api.rendering import public_base_url
from pixelmill.errors import InvalidInput
from pixelmill.library.images import save_image
from pixelmill.marketing import service as marketing
from pixelmill.marketing.schemas import VideoCreate, VideoJobCreated, VideoJobStatus
from pixelmill.operations.inputs import ImageSource
from pixelmill.webhooks.registry import checked_webhook_url

router = APIRouter(prefix="/api/v2", tags=["v2 generation"])

JobNumber = Path(ge=1, le=2**31 - 1, description="the integer id from the create response")


@router.post("/generate/video", status_code=202, responses={202: {"model": VideoJobCreated}})
async def generate_video(
    body: VideoCreate, user: ApiKeyUser, resources: Res, request: Request
) -> JSONResponse:
    """A short talking video from one still image: a face talks (jaw and lips driven by the
    voice's loudness, blinks, head sway), a product gets camera moves with parallax; an offline
    voice speaks ``script`` (an empty script is written for ``duration`` seconds from the
    image's facts); MP4 (H.264 + AAC) in 9:16, 1:1 or 16:9. 50 credits, reserved now and
    returned if the video fails. Poll ``GET /api/v2/jobs/video/{job_id}``. Honours
    ``Idempotency-Key``."""
    base_url = public_base_url(request, resources)
    try:
        script = marketing.check_script(body.script)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from exc
    aspect = body.aspect_ratio or body.aspect

    async def prepare() -> tuple[str | None, str]:
        webhook_url = await checked_webhook_url(body.webhook_url, resources.settings)
        source = ImageSource.choose(body.image_base64, body.image_url)
        saved = await save_image(
            resources.inputs, resources.library_storage, source, user, "inputs"
        )
        return webhook_url, saved.key

    def create(session: Session, prepared: tuple[str | None, str]) -> VideoJobCreated:
        webhook_url, key = prepared
        job, remaining = marketing.create_video_job(
            session,
            resources.jobs,
            user_id=user.id,
            input_key=key,
            script=script,
            duration=body.duration,
            aspect=aspect,
            tone=body.tone,
            subtitles=body.subtitles,
            base_url=base_url,
            product_name=body.product_name,
            webhook_url=webhook_url,
        )
        return marketing.created(job, remaining, base_url)

    def discard(prepared: tuple[str | None, str]) -> None:
        resources.library_storage.delete(prepared[1])

    return await idempotent_create(
        request, resources.db, user, body, 202, Closures(prepare, create, discard)
    )


@router.get("/jobs/video/{job_id}", response_model=VideoJobStatus)
def get_video_job(
    user: ApiKeyUser, resources: Res, request: Request, job_id: int = JobNumber
) -> VideoJobStatus:
    """A video job: ``status`` pending, processing, completed or failed; ``video_url`` (a
    signed, expiring link to the MP4) once completed; ``error_message`` when failed."""
    base_url = public_base_url(request, resources)
    with resources.db.read() as session:
        return marketing.video_status(session, resources.signer, user.id, job_id, base_url)
