"""The fault-injection hook the multi-node tests use is off by default and cannot be turned on
in production."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pixelmill.config import Settings

SECRET = "s" * 40


def test_fault_hook_is_off_by_default_and_refused_in_production() -> None:
    assert Settings(env="production", secret_key=SECRET).fault_kill_before_publish is False
    with pytest.raises(ValidationError, match="PIXELMILL_FAULT_KILL_BEFORE_PUBLISH"):
        Settings(env="production", secret_key=SECRET, fault_kill_before_publish=True)
    assert Settings(env="testing", secret_key=SECRET, fault_kill_before_publish=True)
