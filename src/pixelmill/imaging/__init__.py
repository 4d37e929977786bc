"""Image input and output for every surface: decode and validate untrusted bytes, base64 and
URLs (with an SSRF guard), and encode results.

Pure library code: no FastAPI, no database, no settings. Limits come in as
:class:`ImageLimits` and :class:`FetchPolicy`; every refusal is an :class:`ImageInputError`
with a stable ``code``, an HTTP ``status_code`` and a message for the caller.
"""

from __future__ import annotations

from pixelmill.imaging.b64 import decode_base64_image
from pixelmill.imaging.decode import (
    DecodedImage,
    ImageLimits,
    InputFormat,
    decode_image,
    sniff_format,
)
from pixelmill.imaging.encode import (
    MAX_DIMENSION,
    OutputFormat,
    content_type,
    encode_image,
    file_extension,
    flatten_on_white,
    normalize_format,
)
from pixelmill.imaging.errors import (
    EMPTY_IMAGE,
    SUPPORTED_FORMAT_NAMES,
    ImageInputError,
    megabytes,
    too_large_message,
)
from pixelmill.imaging.fetch import (
    FetchPolicy,
    check_url_allowed,
    fetch_image_url,
    ip_refusal_reason,
    pinned_request,
    validate_addresses,
)

__all__ = [
    "EMPTY_IMAGE",
    "MAX_DIMENSION",
    "SUPPORTED_FORMAT_NAMES",
    "DecodedImage",
    "FetchPolicy",
    "ImageInputError",
    "ImageLimits",
    "InputFormat",
    "OutputFormat",
    "check_url_allowed",
    "content_type",
    "decode_base64_image",
    "decode_image",
    "encode_image",
    "fetch_image_url",
    "file_extension",
    "flatten_on_white",
    "ip_refusal_reason",
    "megabytes",
    "normalize_format",
    "pinned_request",
    "sniff_format",
    "too_large_message",
    "validate_addresses",
]
