"""Result storage behind one protocol (local disk now) and signed, expiring result URLs."""

from pixelmill.storage.base import ObjectStorage, StoredObject
from pixelmill.storage.local import LocalStorage
from pixelmill.storage.signing import UrlSigner

__all__ = ["LocalStorage", "ObjectStorage", "StoredObject", "UrlSigner"]
