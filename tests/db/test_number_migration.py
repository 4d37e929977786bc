"""Migration 0009 gives the avatars and products made before integer ids existed their
numbers, once, at migration time (so reading a list never writes): distinct, drawn from
``public_numbers`` after those already given, and left alone for rows that had one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select, update

from pixelmill.db.migrate import upgrade
from pixelmill.db.models import Avatar, Product, User
from pixelmill.db.session import Database
from pixelmill.library import service as library
from tests.support.services import BACKENDS, postgres_schema

pytestmark = pytest.mark.both_databases


@pytest.fixture(params=BACKENDS)
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database with nothing in it yet."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'numbers.db'}"
        return
    with postgres_schema("pm_mig") as url:
        yield url


def test_older_rows_get_their_numbers_at_migration(empty_url: str) -> None:
    upgrade(empty_url, "0008")
    db = Database(empty_url)
    try:
        with db.transaction() as session:
            # A bare account row: the account service writes tables (api_keys) whose later
            # columns a database at 0008 does not have yet.
            user = User(email="old@example.com", password_hash="x", plan="free", credits=0)
            session.add(user)
            session.flush()
            avatars = [
                library.create_avatar(session, user.id, name=f"a{i}", image_key="k", kind="saved")
                for i in range(3)
            ]
            products = [
                library.create_product(
                    session,
                    user.id,
                    name=f"p{i}",
                    filename="p.png",
                    category="other",
                    description="",
                    image_key="k",
                    width=10,
                    height=10,
                )
                for i in range(2)
            ]
            kept = avatars[0].number
            # As if made before 0005/0007: no number yet (all but the first avatar).
            old_avatars = [a.id for a in avatars[1:]]
            old_products = [p.id for p in products]
            session.execute(update(Avatar).where(Avatar.id.in_(old_avatars)).values(number=None))
            session.execute(update(Product).where(Product.id.in_(old_products)).values(number=None))
        upgrade(empty_url)
        with db.read() as session:
            avatar_numbers = dict(session.execute(select(Avatar.id, Avatar.number)).all())
            product_numbers = dict(session.execute(select(Product.id, Product.number)).all())
    finally:
        db.dispose()
    assert avatar_numbers[avatars[0].id] == kept
    numbers = [*avatar_numbers.values(), *product_numbers.values()]
    assert None not in numbers
    assert len(set(numbers)) == len(numbers) == 5
    assert all(avatar_numbers[a] > kept for a in old_avatars)  # type: ignore[operator]
