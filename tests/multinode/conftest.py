"""The multi-node tests use the shared S3 protocol server (tests/s3_server.py)."""

from __future__ import annotations

from tests.s3_server import s3_endpoint

__all__ = ["s3_endpoint"]
