"""Shared pieces of the surfaces: the public base URL and the v2 result body."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from pixelmill.operations.pipeline import Outcome
from pixelmill.resources import Resources


def public_base_url(request: Request, resources: Resources) -> str:
    """Absolute base for result URLs: the configured public URL, else the request's own."""
    return resources.settings.public_base_url or str(request.base_url)


def v2_body(outcome: Outcome) -> dict[str, Any]:
    """The v2 synchronous response: ``status``, ``result_url``, ``credits_used``,
    ``credits_remaining``, ``processing_time`` and ``details`` (always with ``method``; for image
    results also the output ``width``, ``height`` and ``format``)."""
    details = dict(outcome.details)
    primary = outcome.primary
    if primary is not None:
        details.setdefault("width", primary.width)
        details.setdefault("height", primary.height)
        details["format"] = primary.format
        details["original_width"] = outcome.input.width
        details["original_height"] = outcome.input.height
        if len(outcome.images) > 1:
            scores = {v.get("label"): v for v in details.get("variants", []) if isinstance(v, dict)}
            details["variants"] = [
                {
                    **scores.get(img.label, {}),
                    "label": img.label,
                    "url": img.url,
                    "score": img.score,
                }
                for img in outcome.images
            ]
    return {
        "status": "success",
        "processing_id": outcome.processing_id,
        "result_url": primary.url if primary else None,
        "credits_used": outcome.credits_used,
        "credits_remaining": outcome.credits_remaining,
        "processing_time": outcome.processing_time,
        "details": details,
    }
