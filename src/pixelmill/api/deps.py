"""Dependencies shared by the surfaces: the live resources, the public base URL of result
links (``BaseUrl``), the request's database session (``DbSession``, or ``ReadSession``),
and authentication aliases (``ApiKeyUser``, ``JwtUser``, ``AnyUser``) that also count the request
against the account's rate limits and publish the X-RateLimit-* headers. An API key is a live
key (``pk_live_``) or the account's test key (``pk_test_``: the returned row says
``via_test_key``; its requests count in the test key's own bucket); ``LiveUser`` and
``LiveKeyUser`` refuse test keys (403) where a call changes the account or buys."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Annotated

from fastapi import Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from pixelmill.accounts import service as accounts
from pixelmill.accounts.security import decode_access_token, hash_api_key, is_api_key
from pixelmill.db.models import User
from pixelmill.errors import Forbidden, Unauthorized
from pixelmill.ratelimit.limiter import (
    DASHBOARD_CLIENT,
    DASHBOARD_HEADER,
    READ_METHODS,
    LimitState,
    RateLimiter,
)
from pixelmill.resources import Resources


async def get_resources(request: Request) -> Resources:
    # async: it never blocks, and a plain ``def`` dependency costs a thread-pool hop per request.
    resources: Resources = request.app.state.resources
    return resources


Res = Annotated[Resources, Depends(get_resources)]


async def get_base_url(request: Request, resources: Res) -> str:
    """Absolute base for result URLs: the configured public URL, else the request's own."""
    return resources.settings.public_base_url or str(request.base_url)


BaseUrl = Annotated[str, Depends(get_base_url)]


def get_session(resources: Res) -> Iterator[Session]:
    """The request's unit of work: committed when the endpoint returns (before the response is
    sent, so a failed commit is an error response, never a silent loss), rolled back on error."""
    with resources.db.transaction() as session:
        yield session


DbSession = Annotated[Session, Depends(get_session, scope="function")]


def get_read_session(resources: Res) -> Iterator[Session]:
    """A read-only session for endpoints that only read: on SQLite it takes no write lock, so
    reads never queue behind (or starve) writers."""
    with resources.db.read() as session:
        yield session


ReadSession = Annotated[Session, Depends(get_read_session, scope="function")]

_api_key_scheme = HTTPBearer(
    scheme_name="ApiKey",
    bearerFormat="pk_live_...",
    description="API key (`Authorization: Bearer pk_live_...`), or the account's test key "
    "(`pk_test_...`: free, watermarked results, its own rate limit)",
    auto_error=False,
)
_jwt_scheme = HTTPBearer(
    scheme_name="JWT",
    bearerFormat="JWT",
    description="Access token from POST /api/auth/login",
    auto_error=False,
)

ApiKeyCreds = Annotated[HTTPAuthorizationCredentials | None, Depends(_api_key_scheme)]
JwtCreds = Annotated[HTTPAuthorizationCredentials | None, Depends(_jwt_scheme)]


def publish_limits(request: Request, state: LimitState) -> None:
    """Store the rate-limit headers for the response (added by RateLimitHeadersMiddleware).
    When several buckets apply to one request (plan, then an endpoint's own), the one closest
    to exhaustion is reported."""
    current: LimitState | None = getattr(request.state, "ratelimit", None)
    if current is None or (state.remaining, -state.limit) < (current.remaining, -current.limit):
        request.state.ratelimit = state
        request.state.ratelimit_headers = state.headers()


def count_endpoint(request: Request, resources: Resources, user: User, bucket: str) -> None:
    """Count the request against an endpoint's own bucket too (where it has one). A test
    key's requests count only in its own bucket (:func:`_count`)."""
    if user.via_test_key:
        return
    state = resources.limiter.hit_endpoint(user.id, bucket)
    if state is not None:
        publish_limits(request, state)


def _read_with_work(
    limiter: RateLimiter, user: User, per_minute: int
) -> tuple[LimitState, LimitState]:
    """Count a read; the work allowance's state beside it, read without counting."""
    return limiter.hit_read(user.id, user.plan, per_minute), limiter.work_state(user.id, user.plan)


async def _count(request: Request, resources: Resources, user: User) -> User:
    """Count the request in its allowance (ratelimit/limiter.py): a read (GET, HEAD) in the
    account's read allowance, work in the test key's bucket or the plan's."""
    limiter = resources.limiter
    settings = resources.settings
    if request.method in READ_METHODS:
        dashboard = request.headers.get(DASHBOARD_HEADER) == DASHBOARD_CLIENT
        if dashboard and not user.via_test_key:
            both = partial(_read_with_work, limiter, user, settings.reads_per_minute)
            state, work = await run_in_threadpool(both) if limiter.shared else both()
            publish_limits(request, state)
            request.state.ratelimit_headers |= work.work_headers()
            request.state.account_id = user.id
            return user
        count = partial(limiter.hit_read, user.id, user.plan, settings.reads_per_minute)
    elif user.via_test_key:
        count = partial(limiter.hit_test_key, user.id, settings.test_key_requests_per_minute)
    else:
        count = partial(limiter.hit_account, user.id, user.plan)
    if limiter.shared:  # a networked storage: never wait for it on the event loop
        state = await run_in_threadpool(count)
    else:
        state = count()
    publish_limits(request, state)
    request.state.account_id = user.id  # for the request's access log line
    return user


# Whom a credential belongs to comes from the process's credential cache when it was read in
# the last PIXELMILL_AUTH_CACHE_SECONDS (accounts/credentials.py bounds what that may serve);
# otherwise from the database, in a short read-only transaction of its own on a worker thread
# (no lock is held while the endpoint runs). Authentication is async: a cached credential costs
# no thread hop.
def key_user(resources: Resources, token: str) -> User | None:
    """Whom an API key belongs to, read from the database (blocking: run it in a thread)."""
    with resources.db.read() as session:
        return accounts.user_for_api_key(session, resources.secret, token)


def _jwt_user(resources: Resources, user_id: int) -> User | None:
    with resources.db.read() as session:
        return accounts.active_user(session, user_id)


async def _cached(
    resources: Resources, cache_key: str, load: Callable[[], User | None]
) -> User | None:
    """The user cached under ``cache_key``, else ``load()`` (in the thread pool), cached."""
    user = resources.credentials.get(cache_key)
    if user is None:
        stamp = resources.credentials.stamp()
        user = await run_in_threadpool(load)
        if user is not None:
            resources.credentials.put(cache_key, user, stamp)
    return user


async def _from_key(resources: Resources, token: str) -> User | None:
    cache_key = "key:" + hash_api_key(resources.secret, token)
    return await _cached(resources, cache_key, partial(key_user, resources, token))


async def _from_jwt(resources: Resources, token: str) -> User | None:
    user_id = decode_access_token(resources.secret, token)  # signature and expiry, every time
    if user_id is None:
        return None
    return await _cached(resources, f"user:{user_id}", partial(_jwt_user, resources, user_id))


async def require_api_key(request: Request, resources: Res, creds: ApiKeyCreds) -> User:
    if creds is None or not is_api_key(creds.credentials):
        raise Unauthorized("Missing or invalid API key (send Authorization: Bearer pk_live_...)")
    user = await _from_key(resources, creds.credentials)
    if user is None:
        raise Unauthorized("Invalid API key")
    return await _count(request, resources, user)


async def require_jwt(request: Request, resources: Res, creds: JwtCreds) -> User:
    if creds is None:
        raise Unauthorized("Missing access token (log in at POST /api/auth/login)")
    user = await _from_jwt(resources, creds.credentials)
    if user is None:
        raise Unauthorized("Invalid or expired access token")
    return await _count(request, resources, user)


async def require_any(
    request: Request, resources: Res, key_creds: ApiKeyCreds, jwt_creds: JwtCreds
) -> User:
    """Either credential: API keys are recognised by their ``pk_live_`` / ``pk_test_``
    prefix."""
    creds = key_creds or jwt_creds
    if creds is None:
        raise Unauthorized("Missing credentials (an API key or an access token)")
    token = creds.credentials
    user = (
        await _from_key(resources, token)
        if is_api_key(token)
        else await _from_jwt(resources, token)
    )
    if user is None:
        raise Unauthorized("Invalid API key or access token")
    return await _count(request, resources, user)


ApiKeyUser = Annotated[User, Depends(require_api_key)]
JwtUser = Annotated[User, Depends(require_jwt)]
AnyUser = Annotated[User, Depends(require_any)]

TEST_KEY_REFUSED = "A test key cannot do this; use the account's live key (pk_live_...)"


async def require_live_key(user: ApiKeyUser) -> User:
    if user.via_test_key:
        raise Forbidden(TEST_KEY_REFUSED)
    return user


async def require_live_any(user: AnyUser) -> User:
    if user.via_test_key:
        raise Forbidden(TEST_KEY_REFUSED)
    return user


LiveKeyUser = Annotated[User, Depends(require_live_key)]
"""A live API key (a test key is a 403): for calls that buy or change the account."""
LiveUser = Annotated[User, Depends(require_live_any)]
"""A live API key or an access token (a test key is a 403)."""


def client_ip(request: Request) -> str:
    """The peer address. Behind a reverse proxy, run uvicorn with --proxy-headers and
    --forwarded-allow-ips so this is the real client."""
    return request.client.host if request.client else "unknown"
