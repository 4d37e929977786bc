"""integer ids for the avatars and products made before they existed

Every row created since 0005/0007 draws its number when it is made; this gives the older rows
theirs once, at migration time, so reading a list never has to write.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23 23:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_numbers = sa.table("public_numbers", sa.column("id", sa.Integer), sa.column("kind", sa.String))


def _number_rows(table_name: str, kind: str) -> None:
    conn = op.get_bind()
    table = sa.table(
        table_name,
        sa.column("id", sa.String),
        sa.column("number", sa.Integer),
        sa.column("created_at", sa.DateTime),
    )
    ids = conn.scalars(
        sa.select(table.c.id).where(table.c.number.is_(None)).order_by(table.c.created_at)
    ).all()
    for row_id in ids:
        drawn = conn.scalar(sa.insert(_numbers).values(kind=kind).returning(_numbers.c.id))
        conn.execute(sa.update(table).where(table.c.id == row_id).values(number=drawn))


def upgrade() -> None:
    _number_rows("avatars", "avatar")
    _number_rows("products", "product")


def downgrade() -> None:
    """Numbers once given stay: an id a client has seen must keep naming the same row."""
