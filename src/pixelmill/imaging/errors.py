"""The one error type of ``pixelmill.imaging``: an input we cannot or will not use.

Everything this package refuses (a malformed upload, an oversized file, a URL pointing into our own
network, an upstream that answered 404) is an :class:`ImageInputError` carrying a stable ``code``
for machine consumers (the ``error_code`` of ``/api/process``), an HTTP ``status_code`` and a
human ``message`` that is safe to show to the API caller (the web layer renders it as
``{"detail": message}``). The package never imports the web layer; the web layer maps this type.

Status codes chosen, and why:

=========================  ======  ============================================================
code                       status  why
=========================  ======  ============================================================
EMPTY_INPUT                400     nothing was sent where an image was required
INVALID_BASE64             400     the request field is malformed, before any image exists
URL_REFUSED                400     the URL itself is unacceptable (scheme, credentials, port,
                                   or it resolves to a non-public address); retrying is useless
FILE_TOO_LARGE             413     "Content Too Large" (RFC 9110 15.5.14), also for a download
INVALID_FORMAT             415     "Unsupported Media Type": RFC 9110 15.5.16 allows it for a
                                   format found "as a result of inspecting the data directly",
                                   which is what magic-byte sniffing does
TOO_MANY_PIXELS            422     well-formed image, but its declared size exceeds our limit
CORRUPT_IMAGE              422     recognised format, but the data cannot be decoded
URL_FETCH_FAILED           422     the URL was allowed but gave us no image (DNS failure, timeout,
                                   non-2xx, too many redirects); the caller's input is at fault,
                                   and a refused or failed fetch must never be a 5xx
UNSUPPORTED_OUTPUT_FORMAT  422     a requested output format we cannot write (a bad parameter)
OUTPUT_TOO_LARGE           422     the result cannot be written in the requested format
=========================  ======  ============================================================
"""

from __future__ import annotations

from typing import Final

SUPPORTED_FORMAT_NAMES: Final = ("JPEG", "PNG", "WebP")
"""The input formats we accept, as user-facing messages name them (the one list of them)."""

SUPPORTED_FORMATS_TEXT: Final = (
    ", ".join(SUPPORTED_FORMAT_NAMES[:-1]) + " and " + SUPPORTED_FORMAT_NAMES[-1]
)
"""The accepted formats in a sentence: ``JPEG, PNG and WebP``."""

EMPTY_IMAGE: Final = "The image is empty (0 bytes)."
"""The message of ``EMPTY_INPUT`` on every surface (a 0-byte upload, an empty base64 field)."""

MIB: Final = 1024 * 1024


def megabytes(n: int, *, round_up: bool = False) -> str:
    """``n`` bytes in MB as the plans state them (1 MB = 1,048,576 bytes): ``5``, ``12.5``.
    ``round_up`` for a size being refused, so that it never reads as within its limit."""
    tenths = -(-n * 10 // MIB) if round_up else round(n * 10 / MIB)
    return str(tenths // 10) if tenths % 10 == 0 else f"{tenths / 10:.1f}"


def too_large_message(size: int | None, limit: int, what: str = "The image") -> str:
    """The message of ``FILE_TOO_LARGE`` on every surface, in MB: ``The image is 12.5 MB; the
    limit is 5 MB.`` (``size`` None: known only to be over the limit)."""
    if size is None:
        return f"{what} is larger than {megabytes(limit)} MB, the limit."
    return f"{what} is {megabytes(size, round_up=True)} MB; the limit is {megabytes(limit)} MB."


_DEFAULT_STATUS: Final[dict[str, int]] = {
    "EMPTY_INPUT": 400,
    "INVALID_BASE64": 400,
    "URL_REFUSED": 400,
    "FILE_TOO_LARGE": 413,
    "INVALID_FORMAT": 415,
    "TOO_MANY_PIXELS": 422,
    "CORRUPT_IMAGE": 422,
    "URL_FETCH_FAILED": 422,
    "UNSUPPORTED_OUTPUT_FORMAT": 422,
    "OUTPUT_TOO_LARGE": 422,
}


class ImageInputError(Exception):
    """An image input (bytes, base64 text or URL) that was refused, with a reason for humans.

    ``code`` is one of the keys documented in this module; ``status_code`` defaults to the
    status chosen for that code (400 for an unknown one). ``message`` never contains internal
    details such as the address a hostname resolved to.
    """

    def __init__(self, code: str, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status_code = (
            status_code if status_code is not None else _DEFAULT_STATUS.get(code, 400)
        )

    def __repr__(self) -> str:
        return (
            f"ImageInputError(code={self.code!r}, status_code={self.status_code}, "
            f"message={self.message!r})"
        )
