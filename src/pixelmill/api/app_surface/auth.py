"""``/api/auth``: register, log in, who am I, regenerate the API key."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from fastapi import APIRouter, Form, Request

from pixelmill.accounts import service as accounts
from pixelmill.accounts.schemas import Me, RegeneratedKey, Registered, Token, UserCreate
from pixelmill.api.deps import AnyUser, DbSession, JwtUser, ReadSession, Res, client_ip
from pixelmill.credits import ledger
from pixelmill.queue import run_after_commit

router = APIRouter(prefix="/api/auth", tags=["auth"])


@router.post("/register", response_model=Registered)
def register(body: UserCreate, session: DbSession, resources: Res, request: Request) -> Registered:
    """Create an account. The response carries the first API key, shown only this once."""
    resources.limiter.hit_ip("register", client_ip(request), 20)
    new = accounts.register(
        session, resources.secret, body.email, body.password, resources.settings.free_credits
    )
    return Registered(
        **Me.of(new.user).model_dump(),
        api_key=new.api_key,
        message="Account created. Keep the API key: it is shown only once.",
    )


@router.post("/login", response_model=Token)
def login(
    username: Annotated[str, Form(description="the account's email")],
    password: Annotated[str, Form()],
    session: ReadSession,
    resources: Res,
    request: Request,
) -> Token:
    """OAuth2-style password login (form-urlencoded ``username`` = email, ``password``)."""
    resources.limiter.hit_ip("login", client_ip(request), 30)
    user = accounts.authenticate(session, username, password)
    minutes = resources.settings.jwt_lifetime_minutes
    return Token(
        access_token=accounts.issue_access_token(resources.secret, user, minutes),
        expires_in=minutes * 60,
    )


@router.get("/me", response_model=Me)
def me(user: AnyUser, session: ReadSession) -> Me:
    """The current account; accepts an access token or an API key."""
    return Me.of(user, ledger.balance(session, user.id))


@router.post("/regenerate-token", response_model=RegeneratedKey)
def regenerate_token(user: JwtUser, session: DbSession, resources: Res) -> RegeneratedKey:
    """Issue a new API key; every previous live key of the account stops working at once
    (the test key is replaced only by ``POST /api/v2/account/test-key``)."""
    key = accounts.regenerate_api_key(session, resources.secret, user.id)
    # This process forgets the old key once the revocation is committed (a request that read
    # it just before must not cache it again); other processes within PIXELMILL_AUTH_CACHE_SECONDS.
    run_after_commit(session, partial(resources.credentials.forget_user, user.id))
    return RegeneratedKey(
        token=key, api_key=key, message="New API key issued; previous keys are revoked."
    )
