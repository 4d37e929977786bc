"""The dashboard's job page lists the outputs a job did not deliver, each with the reason the
poll gives (``failures``; docs/jobs.md, "Outputs that were not delivered")."""

from __future__ import annotations

import uuid

from playwright.sync_api import expect

from pixelmill.db.base import utcnow
from pixelmill.db.models import Job
from tests.web.conftest import Live, Tab
from tests.web.test_dashboard import check_accessible, sign_up

REASON = (
    "the product would be cut off by the frame in every placement tried (white studio sweep, "
    "in front; ...): at most 40% of it showed; this output is not delivered"
)


def test_a_jobs_missing_outputs_are_listed_with_their_reasons(tab: Tab, live: Live) -> None:
    page = tab.page
    sign_up(tab)
    user_id = page.evaluate("JSON.parse(localStorage.getItem('pixelmill.session')).user.id")
    job_id = f"job_{uuid.uuid4().hex}"
    now = utcnow()
    with live.resources.db.transaction() as session:  # a job as its run leaves it
        session.add(
            Job(
                id=job_id,
                user_id=user_id,
                kind="scenes",
                status="failed",
                input_key="",
                category="other",
                images_to_generate=2,
                params={
                    "failures": [
                        {"index": 0, "reason": REASON},
                        {"index": 1, "reason": "no product found in the image"},
                    ]
                },
                seed=1,
                credits_reserved=2,
                credits_used=0,
                progress_completed=0,
                progress_failed=2,
                error="no result could be produced (no product found in the image)",
                test=False,
                base_url=live.base_url,
                started_at=now,
                completed_at=now,
            )
        )
    tab.open(f"/jobs/{job_id}")
    expect(page.get_by_test_id("job-status")).to_have_text("failed")
    listed = page.get_by_test_id("job-failures").locator("li")
    expect(listed).to_have_count(2)
    expect(listed.nth(0)).to_have_text(f"Image 1: {REASON}")
    expect(listed.nth(1)).to_have_text("Image 2: no product found in the image")
    expect(page.get_by_text("2 images not delivered (not charged):")).to_be_visible()
    check_accessible(page)
    tab.shot("job-failures")
