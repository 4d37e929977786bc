"""What the sync and async clients share, free of I/O: request building, image inputs, the
retry decision and the table of processing operations."""

from __future__ import annotations

import base64
import os
import random
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from pixelmill_client import __version__
from pixelmill_client.errors import PixelmillError, connection_error, error_for, retry_after_of

DEFAULT_URL = "http://127.0.0.1:8000"
USER_AGENT = f"pixelmill-client/{__version__}"

ImageInput = str | os.PathLike[str] | bytes
"""A local path, the image's bytes, or an ``http(s)://`` URL."""

# The create endpoints that honour Idempotency-Key (src/pixelmill/api/idempotent.py): the
# client sends a fresh key on each of them, reused by its own retries, so a retry after a lost
# answer never creates (or charges) twice.
IDEMPOTENT_PATHS = (
    "/api/v2/jobs",
    "/api/v2/batches",
    "/api/v2/products",
    "/api/v2/generate/",
)


def is_url(value: object) -> bool:
    return isinstance(value, str) and value.startswith(("http://", "https://"))


def read_local(image: ImageInput) -> bytes:
    """The bytes of a path or of bytes (not a URL)."""
    if isinstance(image, bytes | bytearray):
        return bytes(image)
    return Path(image).read_bytes()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def image_fields(image: ImageInput) -> dict[str, str]:
    """The v2 image fields: ``image_url`` for a URL (the server fetches it), else
    ``image_base64``."""
    if is_url(image):
        return {"image_url": str(image)}
    return {"image_base64": b64(read_local(image))}


def filename_of(image: ImageInput, default: str = "image.png") -> str:
    if isinstance(image, bytes | bytearray):
        return default
    name = str(image).split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    return Path(name).name or default


def new_idempotency_key() -> str:
    return f"pmc-{uuid.uuid4().hex}"


def honours_idempotency(method: str, path: str) -> bool:
    if method != "POST":
        return False
    return any(
        path == p or (p.endswith("/") and path.startswith(p)) for p in IDEMPOTENT_PATHS
    ) and not path.endswith("/cancel")


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of 429 and 503 answers and of connection failures.

    The wait is the server's ``Retry-After`` when it sends one (capped at ``max_retry_after``;
    a longer wait is not waited, the error is raised), else an exponential backoff with jitter.
    A request whose answer was lost (a read error or timeout after sending) is retried only when
    repeating it is harmless: GET/DELETE, or a create carrying an ``Idempotency-Key``.
    """

    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 60.0
    statuses: frozenset[int] = field(default_factory=lambda: frozenset({429, 503}))

    def backoff_for(self, attempt: int) -> float:
        base: float = min(self.max_backoff, self.backoff * (2**attempt))
        return base * (0.5 + random.random() / 2)


@dataclass
class Prepared:
    method: str
    path: str
    headers: dict[str, str]
    params: dict[str, Any] | None = None
    json: Any = None
    files: Any = None
    data: Any = None

    @property
    def replay_safe(self) -> bool:
        return self.method in ("GET", "HEAD", "DELETE") or "Idempotency-Key" in self.headers

    def kwargs(self) -> dict[str, Any]:
        out: dict[str, Any] = {"headers": self.headers}
        if self.params:
            out["params"] = {k: v for k, v in self.params.items() if v is not None}
        if self.json is not None:
            out["json"] = self.json
        if self.files is not None:
            out["files"] = self.files
        if self.data is not None:
            out["data"] = self.data
        return out


def prepare(
    api_key: str | None,
    method: str,
    path: str,
    *,
    params: dict[str, Any] | None = None,
    json: Any = None,
    files: Any = None,
    data: Any = None,
    idempotency_key: str | None = None,
) -> Prepared:
    headers = {"Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    if idempotency_key is None and honours_idempotency(method, path):
        idempotency_key = new_idempotency_key()
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    return Prepared(method, path, headers, params, json, files, data)


# An answer may have been lost: the request may have reached the server.
_MAYBE_SENT = (httpx.ReadError, httpx.ReadTimeout, httpx.WriteError, httpx.RemoteProtocolError)
# Nothing reached the server: always safe to try again.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def decide(
    req: Prepared,
    policy: RetryPolicy,
    attempt: int,
    response: httpx.Response | None,
    exc: Exception | None,
) -> float | None:
    """Seconds to wait before another try, or None to stop (then :func:`outcome` decides)."""
    if attempt >= policy.max_retries:
        return None
    if exc is not None:
        if isinstance(exc, _NOT_SENT) or (isinstance(exc, _MAYBE_SENT) and req.replay_safe):
            return policy.backoff_for(attempt)
        return None
    assert response is not None
    if response.status_code not in policy.statuses:
        return None
    wait = retry_after_of(response)
    if wait is None:
        return policy.backoff_for(attempt)
    return wait if wait <= policy.max_retry_after else None


def outcome(response: httpx.Response | None, exc: Exception | None) -> Any:
    """The parsed JSON of a success, or the exception to raise."""
    if exc is not None:
        raise connection_error(exc) from exc
    assert response is not None
    if response.status_code >= 400:
        raise error_for(response)
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError as err:
        raise PixelmillError(
            f"the server answered {response.status_code} with a body that is not JSON",
            status_code=response.status_code,
            body=response.text[:300],
        ) from err


# ---- the processing operations ----------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """A request field an operation takes, offered on the command line as ``--name``."""

    name: str
    type: type = str
    help: str = ""
    choices: tuple[Any, ...] | None = None


@dataclass(frozen=True)
class Operation:
    name: str  # the CLI command and the path: /api/v2/<name>
    help: str
    credits: str
    options: tuple[Option, ...] = ()
    image_result: bool = True

    @property
    def path(self) -> str:
        return f"/api/v2/{self.name}"

    @property
    def method_name(self) -> str:
        return self.name.replace("-", "_")


_FORMAT = Option("format", help="output format", choices=("auto", "png", "jpg", "webp"))
OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in (
        Operation("remove-background", "cut out the subject (transparent PNG)", "1", (_FORMAT,)),
        Operation("make-transparent", "make the background transparent", "1", (_FORMAT,)),
        Operation(
            "upscale",
            "upscale 2x, 4x or 8x",
            "1 (8x: 2)",
            (
                Option("scale", int, "factor", (2, 4, 8)),
                Option("quality", help="method", choices=("fast", "balanced", "high")),
            ),
        ),
        Operation(
            "remove-text",
            "remove text and watermarks",
            "1",
            (
                Option(
                    "scope",
                    help="overlays (default): text laid over the photo; all: the photo's own too",
                    choices=("overlays", "all"),
                ),
            ),
        ),
        Operation(
            "convert",
            "convert the format",
            "1",
            (
                Option("format", help="png, jpg or webp", choices=("png", "jpg", "jpeg", "webp")),
                Option("quality", int, "JPEG/WebP quality 1..100"),
            ),
        ),
        Operation("enhance", "best of several enhancement methods", "1"),
        Operation("unblur", "deblur and sharpen", "1"),
        Operation("colorize", "colorize a black-and-white photo", "1"),
        Operation(
            "style-transfer",
            "apply a look",
            "1",
            (
                Option(
                    "style",
                    help="the look",
                    choices=(
                        "cinematic",
                        "anime",
                        "oil_painting",
                        "watercolor",
                        "sketch",
                        "pop_art",
                        "cyberpunk",
                        "vintage",
                    ),
                ),
                Option("strength", float, "0 = unchanged .. 1 = full style"),
            ),
        ),
        Operation("analyze", "objects, colours, mood, alt text (JSON)", "1", image_result=False),
        Operation(
            "image-to-prompt", "prompts that describe the image (JSON)", "1", image_result=False
        ),
        Operation(
            "edit",
            "prompt-driven edit",
            "2",
            (Option("prompt", help="what to change"), Option("strength", float, "0..1")),
        ),
        Operation(
            "image-to-image",
            "text-prompt transformation",
            "2",
            (Option("prompt", help="the transformation"), Option("strength", float, "0..1")),
        ),
        Operation(
            "replace-background",
            "put the subject on a generated background",
            "2",
            (Option("prompt", help="the new background"),),
        ),
    )
}
