"""Tests for ``pixelmill.imaging.b64``: the base64 spellings clients send, and refusals."""

from __future__ import annotations

import base64

import pytest

from pixelmill.imaging import ImageInputError, decode_base64_image
from tests.imaging.images import array_bytes, gradient

# Two bytes more than a multiple of three, so every encoding needs padding; the 0xfb/0xff
# bytes make standard and URL-safe encodings differ (+/ versus -_).
PAYLOAD = array_bytes(gradient(9, 7), "PNG") + b"\xfb\xff\xfe\xfb\xef"
while len(PAYLOAD) % 3 != 2:
    PAYLOAD += b"\x00"
STANDARD = base64.b64encode(PAYLOAD).decode()
assert STANDARD.endswith("=") and ("+" in STANDARD or "/" in STANDARD)


@pytest.mark.parametrize(
    "text",
    [
        STANDARD,
        base64.encodebytes(PAYLOAD).decode(),  # MIME: newline every 76 characters
        STANDARD.replace("A", "A\r\n", 3),
        f"  {STANDARD}\n",
        STANDARD.rstrip("="),  # padding dropped
        base64.urlsafe_b64encode(PAYLOAD).decode(),
        base64.urlsafe_b64encode(PAYLOAD).decode().rstrip("="),
        f"data:image/png;base64,{STANDARD}",
        f"DATA:image/jpeg;BASE64,{STANDARD}",  # the media type is ignored: bytes are sniffed
        f"data:;base64,{STANDARD}",
        f"data:image/png;name=x.png;base64,{STANDARD}",
    ],
)
def test_accepted_spellings_decode_to_the_same_bytes(text: str) -> None:
    assert decode_base64_image(text, max_bytes=10**6) == PAYLOAD


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", "EMPTY_INPUT"),
        ("   \n\t", "EMPTY_INPUT"),
        ("====", "EMPTY_INPUT"),
        ("data:image/png;base64,", "EMPTY_INPUT"),
        ("abc$def", "INVALID_BASE64"),
        ("not base64 at all!", "INVALID_BASE64"),
        ("QUJD=RA==", "INVALID_BASE64"),  # padding in the middle
        ("QUJDR", "INVALID_BASE64"),  # impossible length: 4n+1 characters
        ("QUJDRA==é", "INVALID_BASE64"),
        (f"data:image/png,{STANDARD}", "INVALID_BASE64"),  # percent-encoded, not base64
        ("data:image/png;base64", "INVALID_BASE64"),  # no comma
    ],
)
def test_refusals(text: str, code: str) -> None:
    with pytest.raises(ImageInputError) as caught:
        decode_base64_image(text, max_bytes=10**6)
    assert caught.value.code == code
    assert caught.value.status_code == 400


def test_size_limit_is_exact_and_checked_on_the_encoded_length() -> None:
    assert decode_base64_image(STANDARD, max_bytes=len(PAYLOAD)) == PAYLOAD
    with pytest.raises(ImageInputError) as caught:
        decode_base64_image(STANDARD, max_bytes=len(PAYLOAD) - 1)
    assert (caught.value.code, caught.value.status_code) == ("FILE_TOO_LARGE", 413)


def test_oversized_text_is_refused_before_decoding() -> None:
    # Invalid characters after the first few: a decoder would report INVALID_BASE64, so
    # FILE_TOO_LARGE proves the length was judged first.
    text = "QUJD" * 10 + "!" * 4000
    with pytest.raises(ImageInputError) as caught:
        decode_base64_image(text, max_bytes=100)
    assert caught.value.code == "FILE_TOO_LARGE"
