"""Decode the ``image_base64`` request field into bytes, tolerant of what real clients send.

The public clients send plain standard base64 without a ``data:`` prefix, but hand-written
integrations wrap lines (MIME, 76 columns), drop the padding, use the URL-safe alphabet or paste
a whole ``data:image/png;base64,...`` URI. All of those are accepted; anything else is a clear
``INVALID_BASE64``. (Named ``b64`` so that it never shadows the standard ``base64`` module.)
"""

from __future__ import annotations

import base64
import binascii
from typing import Final

from pixelmill.imaging.errors import EMPTY_IMAGE, ImageInputError, too_large_message

_WHITESPACE: Final = b" \t\r\n\f\v"
_URLSAFE_TO_STANDARD: Final = bytes.maketrans(b"-_", b"+/")


def decode_base64_image(text: str, max_bytes: int) -> bytes:
    """Decode ``text`` (base64, optionally a ``data:...;base64,`` URI) into at most
    ``max_bytes`` bytes.

    Whitespace anywhere, missing ``=`` padding and the URL-safe alphabet (``-``/``_``) are
    tolerated. The media type of a data URI is ignored: the decoder sniffs the real format.
    Raises :class:`ImageInputError`: ``EMPTY_INPUT``, ``INVALID_BASE64``, or
    ``FILE_TOO_LARGE`` (decided from the encoded length, before decoding).
    """
    payload = _strip_data_uri(text.strip())
    try:
        raw = payload.encode("ascii")
    except UnicodeEncodeError as exc:
        raise ImageInputError(
            "INVALID_BASE64", "The image is not valid base64 (it contains non-ASCII characters)."
        ) from exc
    # bytes.translate is a single C pass, cheap even for a 60 MB string.
    compact = raw.translate(None, _WHITESPACE).rstrip(b"=")
    if not compact:
        raise ImageInputError("EMPTY_INPUT", EMPTY_IMAGE)
    if len(compact) % 4 == 1:
        # No base64 encoding ends with a single character in its last quantum.
        raise ImageInputError(
            "INVALID_BASE64", "The image is not valid base64 (its length is impossible)."
        )
    decoded_size = _decoded_size(len(compact))
    if decoded_size > max_bytes:
        raise ImageInputError("FILE_TOO_LARGE", too_large_message(decoded_size, max_bytes))
    standard = compact.translate(_URLSAFE_TO_STANDARD)
    padded = standard + b"=" * (-len(standard) % 4)
    try:
        # validate=True refuses any character outside the alphabet instead of skipping it,
        # so garbage is reported rather than silently decoded into a different image.
        return base64.b64decode(padded, validate=True)
    except binascii.Error as exc:
        raise ImageInputError(
            "INVALID_BASE64",
            "The image is not valid base64 (send standard base64, optionally as a "
            "data:image/...;base64, URI).",
        ) from exc


def _strip_data_uri(text: str) -> str:
    """Return the payload of a ``data:`` URI (RFC 2397), or ``text`` unchanged."""
    if text[:5].lower() != "data:":
        return text
    header, comma, payload = text.partition(",")
    if not comma:
        raise ImageInputError("INVALID_BASE64", "The data URI has no ',' before its data.")
    params = [part.strip().lower() for part in header[5:].split(";")]
    if "base64" not in params[1:]:
        raise ImageInputError(
            "INVALID_BASE64", "The data URI is not base64-encoded (expected ';base64,')."
        )
    return payload


def _decoded_size(unpadded_length: int) -> int:
    """Bytes produced by ``unpadded_length`` base64 characters (length % 4 != 1)."""
    full, rest = divmod(unpadded_length, 4)
    return full * 3 + {0: 0, 2: 1, 3: 2}[rest]
