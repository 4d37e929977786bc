"""Integer ids for the surfaces that show one (video and ad-pack jobs, the storefront's
enrichment jobs, the studio's saved avatars) over rows keyed by strings. A number is drawn by
inserting a row here; numbers are never reused, on SQLite as on PostgreSQL."""

from __future__ import annotations

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, Session, mapped_column

from pixelmill.db.base import Base


class PublicNumber(Base):
    __tablename__ = "public_numbers"
    __table_args__ = ({"sqlite_autoincrement": True},)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    # What the number was drawn for ("job", "avatar"), for an operator reading the table.
    kind: Mapped[str] = mapped_column(String(32))


def draw_number(session: Session, kind: str) -> int:
    """A new integer id, unique across the database (flushes)."""
    row = PublicNumber(kind=kind)
    session.add(row)
    session.flush()
    return row.id
