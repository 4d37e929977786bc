"""MediaPipe's native start-up lines (absl, TensorFlow Lite) stay off stderr, and what else is
written to stderr meanwhile still gets there."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
import numpy as np
from pixelmill.engines.runtime.mediapipe import POSE, SELFIE
print("before", file=sys.stderr, flush=True)
POSE.process(np.zeros((64, 64, 3), np.uint8))
SELFIE.process(np.zeros((64, 64, 3), np.uint8))
POSE.process(np.zeros((64, 64, 3), np.uint8))
print("after", file=sys.stderr, flush=True)
"""


def test_the_native_start_up_lines_are_silenced() -> None:
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert "absl::InitializeLog" not in run.stderr
    assert "inference_feedback_manager" not in run.stderr
    assert "XNNPACK delegate" not in run.stderr
    assert run.stderr.split() == ["before", "after"], run.stderr
