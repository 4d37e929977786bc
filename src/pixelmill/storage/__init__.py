"""Object storage behind one protocol (local disk, or S3-compatible: ``s3.py``, built by
``factory.build_storage``) and signed, expiring URLs."""

from pixelmill.storage.base import ObjectStorage, StoredObject
from pixelmill.storage.local import LocalStorage
from pixelmill.storage.signing import UrlSigner

__all__ = ["LocalStorage", "ObjectStorage", "StoredObject", "UrlSigner"]
