"""Exceptions: every failed call raises a :class:`PixelmillError` carrying the HTTP
``status_code`` (``None`` when no answer came) and the server's ``detail``."""

from __future__ import annotations

from typing import Any

import httpx


class PixelmillError(Exception):
    """A call that failed. ``detail`` is the server's message (its ``detail`` field, else
    ``error``, else the start of the body)."""

    def __init__(
        self,
        detail: str,
        *,
        status_code: int | None = None,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"{status_code}: {detail}" if status_code else detail)
        self.detail = detail
        self.status_code = status_code
        self.body = body
        self.headers = headers or {}


class BadRequest(PixelmillError):
    """400 or 422: the server could not use the request (``detail`` says why)."""


class AuthenticationError(PixelmillError):
    """401: a missing or invalid API key."""


class InsufficientCredits(PixelmillError):
    """402: not enough credits; nothing was charged."""


class NotFound(PixelmillError):
    """404: no such id for this account."""


class Conflict(PixelmillError):
    """409: for example an ``Idempotency-Key`` reused with a different body."""


class RateLimited(PixelmillError):
    """429 after the retries: ``retry_after`` is the server's wait, in seconds."""

    def __init__(self, detail: str, *, retry_after: float | None = None, **kw: Any) -> None:
        super().__init__(detail, **kw)
        self.retry_after = retry_after


class ServerError(PixelmillError):
    """5xx: the server failed or is unavailable."""


class APIConnectionError(PixelmillError):
    """No answer: the server could not be reached, or the connection broke or timed out.
    ``url`` is the address that was tried (None when unknown)."""

    def __init__(self, detail: str, *, url: str | None = None, **kw: Any) -> None:
        super().__init__(detail, **kw)
        self.url = url


def connection_error(exc: Exception) -> APIConnectionError:
    """The error for a request that got no answer, naming the address it tried."""
    url: str | None = None
    try:
        url = str(exc.request.url) if isinstance(exc, httpx.RequestError) else None
    except RuntimeError:  # an exception raised without its request
        url = None
    what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if url is None:
        return APIConnectionError(what)
    return APIConnectionError(f"no answer from {url} ({what})", url=url)


class JobFailed(PixelmillError):
    """A job or batch ended ``failed`` (``job`` is its last state)."""

    def __init__(self, detail: str, job: Any) -> None:
        super().__init__(detail)
        self.job = job


class WaitTimeout(PixelmillError):
    """``wait()`` gave up before the job ended."""


_BY_STATUS: dict[int, type[PixelmillError]] = {
    400: BadRequest,
    401: AuthenticationError,
    402: InsufficientCredits,
    403: AuthenticationError,
    404: NotFound,
    409: Conflict,
    413: BadRequest,
    422: BadRequest,
}


def validation_message(errors: list[Any]) -> str:
    """A list of validation errors (FastAPI's 422 ``detail``: ``loc``, ``msg``) as
    ``field: message`` lines, the field without the ``body``/``query`` prefix
    (``num_outputs: Input should be less than or equal to 30``)."""
    lines = []
    for item in errors:
        if not isinstance(item, dict):
            lines.append(str(item))
            continue
        loc = [str(part) for part in item.get("loc") or ()]
        if len(loc) > 1 and loc[0] in ("body", "query", "path", "header", "form"):
            loc = loc[1:]
        field = ".".join(loc)
        message = str(item.get("msg") or item.get("message") or item)
        lines.append(f"{field}: {message}" if field else message)
    return "\n".join(lines)


def detail_of(response: httpx.Response) -> tuple[str, Any]:
    """The message of an error answer and its parsed body (a list of validation errors
    becomes one ``field: message`` line each)."""
    try:
        body: Any = response.json()
    except ValueError:
        return (response.text[:300] or response.reason_phrase), response.text
    if isinstance(body, dict):
        detail = body.get("detail") or body.get("error")
        if isinstance(detail, list):
            return validation_message(detail), body
        if detail is not None:
            return (detail if isinstance(detail, str) else str(detail)), body
    return str(body)[:300], body


def retry_after_of(response: httpx.Response) -> float | None:
    """``Retry-After`` in seconds (a number or an HTTP date), or None."""
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    from datetime import UTC, datetime

    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def error_for(response: httpx.Response) -> PixelmillError:
    """The exception for an error answer."""
    detail, body = detail_of(response)
    kw: dict[str, Any] = {
        "status_code": response.status_code,
        "body": body,
        "headers": dict(response.headers),
    }
    if response.status_code == 429:
        return RateLimited(detail, retry_after=retry_after_of(response), **kw)
    if response.status_code >= 500:
        return ServerError(detail, **kw)
    return _BY_STATUS.get(response.status_code, PixelmillError)(detail, **kw)
