"""pixelmill-client: a typed Python client and command line for a pixelmill server.

>>> from pixelmill_client import Client
>>> with Client(api_key="pk_live_...", base_url="http://127.0.0.1:8000") as pm:  # doctest: +SKIP
...     result = pm.remove_background("photo.jpg")
...     pm.download(result.result_url, "cutout.png")
"""

from __future__ import annotations

__version__ = "0.1.0"

from pixelmill_client._core import OPERATIONS, ImageInput, RetryPolicy
from pixelmill_client.aio import AsyncClient
from pixelmill_client.client import Client
from pixelmill_client.errors import (
    APIConnectionError,
    AuthenticationError,
    BadRequest,
    Conflict,
    InsufficientCredits,
    JobFailed,
    NotFound,
    PixelmillError,
    RateLimited,
    ServerError,
    WaitTimeout,
)
from pixelmill_client.webhooks import WebhookVerificationError, WebhookVerifier

__all__ = [
    "OPERATIONS",
    "APIConnectionError",
    "AsyncClient",
    "AuthenticationError",
    "BadRequest",
    "Client",
    "Conflict",
    "ImageInput",
    "InsufficientCredits",
    "JobFailed",
    "NotFound",
    "PixelmillError",
    "RateLimited",
    "RetryPolicy",
    "ServerError",
    "WaitTimeout",
    "WebhookVerificationError",
    "WebhookVerifier",
    "__version__",
]
