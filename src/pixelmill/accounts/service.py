"""Account operations: registration, login, API keys, plans. Services never commit."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from pixelmill.accounts import security
from pixelmill.accounts.plans import PLANS
from pixelmill.credits import ledger
from pixelmill.db.base import utcnow
from pixelmill.db.models import ApiKey, User
from pixelmill.errors import Conflict, InvalidInput, NotFound, Unauthorized


@dataclass(frozen=True)
class NewAccount:
    user: User
    api_key: str


def normalize_email(email: str) -> str:
    return email.strip().lower()


def get_by_email(session: Session, email: str) -> User | None:
    return session.scalar(select(User).where(User.email == normalize_email(email)))


def require_by_email(session: Session, email: str) -> User:
    user = get_by_email(session, email)
    if user is None:
        raise NotFound(f"No account with email {email}")
    return user


def register(
    session: Session, secret: str, email: str, password: str, free_credits: int
) -> NewAccount:
    """Create an account with its first API key and the sign-up credits."""
    email = normalize_email(email)
    if len(password) < 6:
        raise InvalidInput("Password must be at least 6 characters")
    if get_by_email(session, email) is not None:
        raise Conflict("An account with this email already exists")
    user = User(
        email=email,
        password_hash=security.hash_password(password),
        is_active=True,
        plan="free",
        credits=0,
    )
    session.add(user)
    try:
        session.flush()
    except IntegrityError as exc:  # a concurrent registration won the race
        raise Conflict("An account with this email already exists") from exc
    if free_credits > 0:
        ledger.grant(session, user.id, free_credits, kind="signup", memo="sign-up credits")
    key = create_api_key(session, secret, user.id)
    session.refresh(user)
    return NewAccount(user, key)


def authenticate(session: Session, email: str, password: str) -> User:
    user = get_by_email(session, email)
    # Verify against a dummy hash when the user is unknown, so timing does not reveal accounts.
    if user is None:
        security.verify_password(_DUMMY_HASH, password)
        raise Unauthorized("Incorrect email or password")
    if not security.verify_password(user.password_hash, password) or not user.is_active:
        raise Unauthorized("Incorrect email or password")
    return user


def issue_access_token(secret: str, user: User, lifetime_minutes: int) -> str:
    return security.create_access_token(secret, user.id, timedelta(minutes=lifetime_minutes))


def create_api_key(session: Session, secret: str, user_id: int) -> str:
    """A new key for the user, returned once in clear; earlier keys stay valid."""
    key = security.new_api_key()
    session.add(
        ApiKey(user_id=user_id, key_hash=security.hash_api_key(secret, key), prefix=key[:12])
    )
    session.flush()
    return key


def _revoke_keys(session: Session, user_id: int, test: bool) -> None:
    session.execute(
        update(ApiKey)
        .where(ApiKey.user_id == user_id, ApiKey.revoked_at.is_(None), ApiKey.test.is_(test))
        .values(revoked_at=utcnow())
    )


def regenerate_api_key(session: Session, secret: str, user_id: int) -> str:
    """Revoke every live key of the user and issue a new one: old keys stop working at once
    (the test key has its own rotation: :func:`create_test_key`)."""
    _revoke_keys(session, user_id, test=False)
    return create_api_key(session, secret, user_id)


def create_test_key(session: Session, secret: str, user_id: int) -> str:
    """A new test key (``pk_test_...``), returned once in clear; the account's earlier test
    key is revoked (an account has at most one). Work done with it is never charged and its
    images are watermarked."""
    _revoke_keys(session, user_id, test=True)
    key = security.new_api_key(test=True)
    session.add(
        ApiKey(
            user_id=user_id,
            key_hash=security.hash_api_key(secret, key),
            prefix=key[:12],
            test=True,
        )
    )
    session.flush()
    return key


def user_for_api_key(session: Session, secret: str, key: str) -> User | None:
    """The active account of an unrevoked key; for a test key, the row says so
    (``User.via_test_key``)."""
    if not security.is_api_key(key):
        return None
    row = session.execute(
        select(User, ApiKey.test)
        .join(ApiKey, ApiKey.user_id == User.id)
        .where(
            ApiKey.key_hash == security.hash_api_key(secret, key),
            ApiKey.revoked_at.is_(None),
            User.is_active.is_(True),
        )
    ).first()
    if row is None:
        return None
    user, test = row
    # What waives charges is the stored key's flag, never the prefix the caller sent.
    user.via_test_key = bool(test)
    return user


def active_user(session: Session, user_id: int) -> User | None:
    user = session.get(User, user_id)
    return user if user is not None and user.is_active else None


def set_plan(session: Session, user: User, plan: str) -> None:
    if plan not in PLANS:
        raise InvalidInput(f"Unknown plan {plan!r}; plans: {', '.join(PLANS)}")
    user.plan = plan
    session.flush()


_DUMMY_HASH = security.hash_password("timing-equaliser")
