"""One error hierarchy for expected failures, rendered per surface by ``pixelmill.app``.

Every expected outcome (bad input, missing credential, not enough credits, unknown id) is an
``AppError`` with a status code and a human message; nothing expected is ever a 500.
"""

from __future__ import annotations


class AppError(Exception):
    status_code = 400
    code = "BAD_REQUEST"

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        code: str | None = None,
        details: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        if status_code is not None:
            self.status_code = status_code
        if code is not None:
            self.code = code
        self.headers: dict[str, str] = {}


class Unauthorized(AppError):
    status_code = 401
    code = "UNAUTHORIZED"

    def __init__(self, message: str = "Invalid or missing credentials") -> None:
        super().__init__(message)
        self.headers = {"WWW-Authenticate": "Bearer"}


class InsufficientCredits(AppError):
    """402. With ``needed`` (what the call costs) and ``balance`` (what the account has), the
    response also says both as ``X-Credits-Required`` and ``X-Credits-Remaining``."""

    status_code = 402
    code = "INSUFFICIENT_CREDITS"

    def __init__(
        self, message: str, *, needed: int | None = None, balance: int | None = None
    ) -> None:
        super().__init__(message)
        if needed is not None:
            self.headers["X-Credits-Required"] = str(needed)
        if balance is not None:
            self.headers["X-Credits-Remaining"] = str(balance)


class Forbidden(AppError):
    """The credential is valid but may not do this (e.g. a test key buying or making keys)."""

    status_code = 403
    code = "FORBIDDEN"


class NotFound(AppError):
    status_code = 404
    code = "NOT_FOUND"


class Conflict(AppError):
    status_code = 409
    code = "CONFLICT"


class InvalidInput(AppError):
    """A well-formed request whose content we cannot use (bad image, unknown prompt...)."""

    status_code = 422
    code = "INVALID_INPUT"


class RateLimited(AppError):
    status_code = 429
    code = "RATE_LIMITED"

    def __init__(self, message: str, retry_after: int, headers: dict[str, str]) -> None:
        super().__init__(message)
        self.headers = {**headers, "Retry-After": str(max(1, retry_after))}


class ProviderError(AppError):
    """A configured generative backend (OpenAI-compatible, Replicate, ComfyUI) failed and
    ``PIXELMILL_PROVIDER_FALLBACK=error``: 502 when it answered badly, 503 (with
    ``Retry-After``) when it could not be reached or was overloaded. Credits are released."""

    status_code = 502
    code = "PROVIDER_ERROR"

    def __init__(self, message: str, *, unavailable: bool = False) -> None:
        super().__init__(message)
        if unavailable:
            self.status_code = 503
            self.code = "PROVIDER_UNAVAILABLE"
            self.headers = {"Retry-After": "30"}


class ServerBusy(AppError):
    """This process's queue for CPU work is full (or a request waited its longest there): 503
    with ``Retry-After``, answered before anything is read, decoded or charged."""

    status_code = 503
    code = "SERVER_BUSY"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.headers = {"Retry-After": str(max(1, retry_after))}
