"""A short soak (``bench/soak.py``) in the suite: a few hundred real requests of the mix at
concurrency 8 against ``pixelmill serve``; no 5xx, every job completed, and the server's
resident memory after the warm-up stays within bounds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.slow
def test_a_short_soak_has_no_5xx_and_flat_memory(tmp_path: Path) -> None:
    out = tmp_path / "soak.json"
    # Every kind (scenes included: the 60th and 120th requests) has run before the warm-up
    # ends, so what follows measures steady state, not models loading.
    run = subprocess.run(
        [
            sys.executable,
            str(BENCH / "soak.py"),
            *("--requests", "270", "--warmup", "130", "--scene-every", "60"),
            *("--json", str(out)),
        ],
        cwd=BENCH,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["five_xx"] == 0 and report["unanswered"] == 0, report["errors"]
    assert report["jobs"] == {"completed": 4}
    assert set(report["kinds"]) == {"read", "background", "upscale", "text", "scene"}
    assert sum(k["count"] for k in report["kinds"].values()) == 270
    server = max(report["processes"], key=lambda p: p["rss_end_mb"])
    assert server["rss_after_warmup_mb"] > 100  # the models are in
    # Bounded growth: what 140 requests add after the warm-up (a leak of ~11 MB per engine
    # run, onnxruntime 1.24's, would add about 170 MB here).
    assert server["rss_end_mb"] - server["rss_after_warmup_mb"] < 60, report["processes"]
