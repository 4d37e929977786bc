"""``GET /files/<key>``: stored results behind signed, expiring URLs (local storage)."""

from __future__ import annotations

from fastapi import APIRouter, Response

from pixelmill.api.deps import Res
from pixelmill.errors import AppError, NotFound
from pixelmill.storage import ObjectStorage, UrlSigner

router = APIRouter(tags=["files"])


def signed_file(
    signer: UrlSigner, storage: ObjectStorage, key: str, exp: int, sig: str
) -> Response:
    """Serve ``key`` from ``storage`` if the signature is valid: 404 for a bad signature or a
    missing file, 410 once the link has expired."""
    problem = signer.check(key, exp, sig)
    if problem == "link expired":
        raise AppError("This link has expired", status_code=410, code="EXPIRED")
    if problem is not None:
        raise NotFound("File not found")
    obj = storage.get(key)
    if obj is None:
        raise NotFound("File not found")
    return Response(
        obj.data,
        media_type=obj.content_type,
        headers={"Cache-Control": "private, max-age=3600", "X-Content-Type-Options": "nosniff"},
    )


@router.get("/files/{key:path}", response_class=Response)
def get_file(key: str, exp: int, sig: str, resources: Res) -> Response:
    """A stored result. The link is signed and stops working after the retention period."""
    return signed_file(resources.signer, resources.storage, key, exp, sig)
