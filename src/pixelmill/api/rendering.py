"""Shared pieces of the surfaces: the public base URL of result links. (The synchronous result
bodies are response models in ``pixelmill.operations.schemas``.)"""

from __future__ import annotations

from fastapi import Request

from pixelmill.resources import Resources


def public_base_url(request: Request, resources: Resources) -> str:
    """Absolute base for result URLs (a handler takes ``deps.BaseUrl`` instead)."""
    return resources.settings.public_base_url or str(request.base_url)
