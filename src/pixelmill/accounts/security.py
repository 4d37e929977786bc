"""Password hashing (argon2), JWT access tokens (HS256) and API-key generation and hashing.

API keys are ``pk_live_`` (live) or ``pk_test_`` (test: free, watermarked work) + 43 random
URL-safe characters (256 bits). Only an HMAC-SHA256 of the
key under the server secret is stored, so a database leak does not leak usable keys, and lookups
stay a single indexed equality match. Changing the secret therefore invalidates every API key.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import UTC, datetime, timedelta

import jwt
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

API_KEY_PREFIX = "pk_live_"
TEST_KEY_PREFIX = "pk_test_"
KEY_PREFIXES = (API_KEY_PREFIX, TEST_KEY_PREFIX)
"""What an API key starts with (anything else is not one: e.g. a JWT)."""
_hasher = PasswordHasher()
_JWT_ALG = "HS256"


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def new_api_key(test: bool = False) -> str:
    return (TEST_KEY_PREFIX if test else API_KEY_PREFIX) + secrets.token_urlsafe(32)


def is_api_key(token: str) -> bool:
    return token.startswith(KEY_PREFIXES)


def hash_api_key(secret: str, key: str) -> str:
    return hmac.new(secret.encode(), key.encode(), hashlib.sha256).hexdigest()


def create_access_token(secret: str, user_id: int, lifetime: timedelta) -> str:
    now = datetime.now(UTC)
    payload = {"sub": str(user_id), "iat": now, "exp": now + lifetime, "typ": "access"}
    return jwt.encode(payload, secret, algorithm=_JWT_ALG)


def decode_access_token(secret: str, token: str) -> int | None:
    """The user id of a valid, unexpired access token; None for anything else."""
    try:
        payload = jwt.decode(token, secret, algorithms=[_JWT_ALG], options={"require": ["exp"]})
    except jwt.PyJWTError:
        return None
    if payload.get("typ") != "access":
        return None
    try:
        return int(payload["sub"])
    except (KeyError, TypeError, ValueError):
        return None
