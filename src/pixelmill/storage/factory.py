"""``build_storage(settings, store)``: the backend ``PIXELMILL_STORAGE`` names, for one store.

Two stores exist: ``files`` (results, deleted after ``PIXELMILL_RESULT_TTL_HOURS``) and
``library`` (products, avatars, job inputs: kept). Locally each is a directory under
``PIXELMILL_DATA_DIR``; on S3 each is a prefix in ``PIXELMILL_S3_BUCKET``, with the same names,
so the two layouts match object for object."""

from __future__ import annotations

from typing import Literal

from pixelmill.config import Settings
from pixelmill.storage.base import ObjectStorage
from pixelmill.storage.local import LocalStorage

Store = Literal["files", "library"]


def build_storage(settings: Settings, store: Store) -> ObjectStorage:
    """The object store ``store`` on the configured backend (nothing is contacted yet)."""
    if settings.storage == "s3":
        # Imported here: boto3 is needed only when S3 is configured.
        from pixelmill.storage.s3 import S3Storage, make_client

        assert settings.s3_bucket is not None  # the settings validator refuses s3 without one
        endpoint, region = settings.s3_endpoint_url, settings.s3_region
        return S3Storage(
            make_client(endpoint, region),
            settings.s3_bucket,
            f"{settings.s3_prefix}{store}/",
            probe=make_client(endpoint, region, connect_timeout=1, read_timeout=2, attempts=1),
        )
    return LocalStorage(settings.data_dir / store)
