"""The ``video`` job kind: one planned MP4. The plan loads the image, writes the script when
the job has none (facts from the analysis engine) and speaks it, so an unusable script fails
the job with its reason before anything is rendered; the render makes and encodes the video.
What the video is (duration, script, method) is merged into the job's params when stored."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import Field
from sqlalchemy.orm import Session

from pixelmill.engines.base import OutputFile, PlannedFile
from pixelmill.imaging import DecodedImage
from pixelmill.jobs import service as jobs
from pixelmill.jobs.runner import Rendered
from pixelmill.jobs.service import Claim, JobParams
from pixelmill.marketing.video import Voiceover, script_for


class VideoJobParams(JobParams):
    """What a ``video`` job keeps: the request's fields (an empty ``script`` is written by
    the run for ``duration`` seconds in ``tone``), the surface that polls it, and what the
    stored video is (``video``: duration, script, method; merged in when stored)."""

    script: str = ""
    duration: int = 5
    aspect: str = "9:16"
    tone: str = "enthusiastic"
    subtitles: bool = False
    product_name: str | None = None
    surface: str = "v2"
    video: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class VideoKind:
    load_input: Callable[[str], DecodedImage]
    voiceover: Voiceover
    result_format: str = "jpeg"
    subject: str = "image"

    def plan(self, claim: Claim) -> list[PlannedFile]:
        p = claim.typed(VideoJobParams)
        image = self.load_input(claim.input_key).pixels
        script = " ".join(p.script.split())
        written: dict[str, Any] = {}
        if not script:
            result = script_for(
                image,
                duration_seconds=p.duration,
                tone=p.tone,
                product_name=p.product_name,
                seed=claim.seed,
            )
            script = result.script
            written = {"script_written": True, "script_method": result.details["method"]}
        speech = self.voiceover.speak(script)

        def render() -> OutputFile:
            out = self.voiceover.render(
                image, speech, script, aspect=p.aspect, subtitles=p.subtitles, seed=claim.seed
            )
            out.data.update(written)
            return out

        return [PlannedFile(0, "video", render, price=claim.unit_price)]

    def record(self, session: Session, claim: Claim, rendered: Rendered) -> None:
        jobs.merge_params(session, claim.job_id, video=rendered.output.data)
