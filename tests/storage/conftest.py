"""The storage tests run against a real S3 protocol server (tests/s3_server.py: moto's server
mode on loopback)."""

from __future__ import annotations

from tests.s3_server import REGION, list_names, s3_bucket, s3_endpoint

__all__ = ["REGION", "list_names", "s3_bucket", "s3_endpoint"]
