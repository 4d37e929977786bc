"""S3-compatible object storage (AWS S3, MinIO, Cloudflare R2, Ceph RGW...) through boto3.

One bucket holds both stores under two prefixes, mirroring the local layout: results under
``<PIXELMILL_S3_PREFIX>files/`` and library images under ``<PIXELMILL_S3_PREFIX>library/``.
Objects are private; clients reach them through the server's signed ``/files/...`` routes,
which read the object and answer with its bytes (see docs/decisions.md). Credentials come from
boto3's standard chain (``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` /
``AWS_SESSION_TOKEN``, ``AWS_PROFILE``, an instance or task role).

The client is made once per store and shared by every thread (boto3 clients are thread-safe).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from pixelmill.errors import AppError
from pixelmill.storage.base import StoredObject, content_type_for, valid_key

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

log = logging.getLogger("pixelmill.storage")

_MISSING = frozenset({"NoSuchKey", "404", "NotFound"})
_DELETE_BATCH = 1000  # the most keys one DeleteObjects call takes


class StorageUnavailable(AppError):
    """The object store did not answer (network, endpoint or server error): 503, try again."""

    status_code = 503
    code = "STORAGE_UNAVAILABLE"

    def __init__(self, message: str = "Object storage is unavailable; try again shortly") -> None:
        super().__init__(message)
        self.headers = {"Retry-After": "5"}


def make_client(
    endpoint_url: str | None,
    region: str | None,
    *,
    connect_timeout: float = 5,
    read_timeout: float = 30,
    attempts: int = 3,
) -> S3Client:
    """An S3 client for AWS (no endpoint) or any S3-compatible endpoint. A custom endpoint is
    addressed path-style (``endpoint/bucket/key``), which MinIO, Ceph and R2 all accept without
    wildcard DNS; bounded timeouts and the standard retry mode, ``attempts`` tries in all."""
    import boto3
    from botocore.config import Config

    config = Config(
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        # ``total_max_attempts`` counts the first try; botocore's ``max_attempts`` counts
        # retries (``max_attempts=1`` sends twice).
        retries={"total_max_attempts": attempts, "mode": "standard"},
        s3={"addressing_style": "path" if endpoint_url else "auto"},
    )
    return boto3.client("s3", endpoint_url=endpoint_url, region_name=region, config=config)


class S3Storage:
    """The objects of one store under ``prefix`` in ``bucket``."""

    def __init__(
        self, client: S3Client, bucket: str, prefix: str, probe: S3Client | None = None
    ) -> None:
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        self.client = client
        self.probe = probe or client  # for check(): short timeouts, no retries
        self.bucket = bucket
        self.prefix = prefix

    def _name(self, key: str) -> str:
        if not valid_key(key):
            raise ValueError(f"invalid storage key: {key!r}")
        return self.prefix + key

    def put(self, key: str, data: bytes, content_type: str) -> None:
        name = self._name(key)
        try:
            # One PUT: the object appears whole or not at all.
            self.client.put_object(
                Bucket=self.bucket, Key=name, Body=data, ContentType=content_type
            )
        except (BotoCoreError, ClientError) as exc:
            raise _unavailable("put", name, exc) from exc

    def get(self, key: str) -> StoredObject | None:
        if not valid_key(key):
            return None
        name = self.prefix + key
        try:
            answer = self.client.get_object(Bucket=self.bucket, Key=name)
            data = answer["Body"].read()
        except ClientError as exc:
            if _code(exc) in _MISSING:
                return None
            raise _unavailable("get", name, exc) from exc
        except BotoCoreError as exc:
            raise _unavailable("get", name, exc) from exc
        return StoredObject(data, answer.get("ContentType") or content_type_for(key))

    def delete(self, key: str) -> None:
        if not valid_key(key):
            return
        name = self.prefix + key
        try:
            self.client.delete_object(Bucket=self.bucket, Key=name)  # missing: no error
        except (BotoCoreError, ClientError) as exc:
            raise _unavailable("delete", name, exc) from exc

    def delete_older_than(self, cutoff: datetime) -> int:
        """Delete this store's objects last written before ``cutoff`` (S3's LastModified: the
        time of the PUT), in batches of 1000; how many."""
        removed = 0
        batch: list[str] = []
        for name in self._written_before(cutoff):
            batch.append(name)
            if len(batch) == _DELETE_BATCH:
                removed += self._delete_batch(batch)
                batch = []
        if batch:
            removed += self._delete_batch(batch)
        return removed

    def _written_before(self, cutoff: datetime) -> Iterator[str]:
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self.prefix
        )
        for page in pages:
            for item in page.get("Contents", []):
                if "Key" in item and "LastModified" in item and item["LastModified"] < cutoff:
                    yield item["Key"]

    def _delete_batch(self, names: list[str]) -> int:
        answer = self.client.delete_objects(
            Bucket=self.bucket,
            Delete={"Objects": [{"Key": n} for n in names], "Quiet": True},
        )
        errors = answer.get("Errors", [])
        for error in errors[:5]:
            log.warning("could not delete %s: %s", error.get("Key"), error.get("Message"))
        return len(names) - len(errors)

    def check(self) -> None:
        """The bucket exists and these credentials may use it (HeadBucket)."""
        self.probe.head_bucket(Bucket=self.bucket)


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _unavailable(action: str, name: str, exc: Exception) -> StorageUnavailable:
    log.error("object storage %s of %s failed: %s", action, name, exc)
    return StorageUnavailable()
