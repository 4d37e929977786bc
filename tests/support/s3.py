"""A real S3 protocol server for the tests: moto in server mode on loopback (its HTTP API is
S3's), with throwaway credentials in the standard AWS variables. The root ``conftest.py``
registers its fixtures (``s3_endpoint``, ``s3_bucket``) for tests/storage and tests/multinode."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator

import boto3
import pytest

from pixelmill.storage.s3 import make_client

REGION = "us-east-1"
ACCESS_KEY = "pixelmill-test"
SECRET_KEY = "pixelmill-test-secret"


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    with pytest.MonkeyPatch.context() as env:
        # What an operator sets; boto3's standard chain reads them.
        env.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        env.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
        env.delenv("AWS_SESSION_TOKEN", raising=False)
        env.delenv("AWS_PROFILE", raising=False)
        yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def s3_bucket(s3_endpoint: str) -> str:
    """A new, empty bucket on the test server."""
    return new_bucket(s3_endpoint)


def new_bucket(endpoint: str) -> str:
    name = f"pixelmill-{uuid.uuid4().hex[:12]}"
    make_client(endpoint, REGION).create_bucket(Bucket=name)
    return name


def list_names(endpoint: str, bucket: str) -> list[str]:
    """Every object name in ``bucket``, read with a plain boto3 client (not our code)."""
    client = boto3.client("s3", endpoint_url=endpoint, region_name=REGION)
    answer = client.list_objects_v2(Bucket=bucket)
    return sorted(item["Key"] for item in answer.get("Contents", []) if "Key" in item)


def read_object(endpoint: str, bucket: str, key: str) -> bytes:
    """One object's bytes, read with a plain boto3 client (not our code)."""
    client = boto3.client("s3", endpoint_url=endpoint, region_name=REGION)
    body: bytes = client.get_object(Bucket=bucket, Key=key)["Body"].read()
    return body
