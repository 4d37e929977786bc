"""A job's record of the outputs it did not deliver (``jobs/failures.py``): one entry per
index, the latest reason wins, a later delivery removes it, reasons stay sentences, and a
completed job that missed some says "n of m outputs failed; see failures"."""

from __future__ import annotations

from pixelmill.db.models import Job
from pixelmill.jobs.failures import (
    MAX_REASON,
    failures_in,
    partial_warning,
    with_failure,
    without_failure,
)
from pixelmill.jobs.schemas import job_warnings


def test_one_entry_per_index_in_order_and_a_delivery_removes_it() -> None:
    params = with_failure({"warnings": ["w"]}, 2, "the model's picture is blank")
    params = with_failure(params, 0, "no product found")
    params = with_failure(params, 2, "  the product would be\n cut off  ")
    assert params["warnings"] == ["w"]  # the rest of the parameters is kept
    assert [(f.index, f.reason) for f in failures_in(params)] == [
        (0, "no product found"),
        (2, "the product would be cut off"),
    ]
    assert without_failure(params, 1) is None  # nothing to write
    cleared = without_failure(params, 0)
    assert cleared is not None and [f.index for f in failures_in(cleared)] == [2]
    assert failures_in(None) == [] and failures_in({"failures": [{"reason": "no index"}]}) == []


def test_a_long_reason_is_cut_to_a_sentence() -> None:
    (failure,) = failures_in(with_failure(None, 0, "x" * 5000))
    assert len(failure.reason) == MAX_REASON and failure.reason.endswith("…")


def test_a_completed_job_that_missed_outputs_says_so_in_its_warnings() -> None:
    params = with_failure({"warnings": ["prompt words not used: zorblax"]}, 1, "blank")
    params = with_failure(params, 3, "blank")
    job = Job(status="completed", images_to_generate=4, params=params)
    assert partial_warning(job) == "2 of 4 outputs failed; see failures"
    assert job_warnings(job) == [
        "prompt words not used: zorblax",
        "2 of 4 outputs failed; see failures",
    ]
    job.status = "processing"  # said once it has ended
    assert partial_warning(job) is None
    job.status, job.params = "completed", None
    assert partial_warning(job) is None and job_warnings(job) is None
