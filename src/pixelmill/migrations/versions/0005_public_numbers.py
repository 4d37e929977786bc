"""integer ids for jobs and avatars shown on integer-id surfaces

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 20:45:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "public_numbers",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_public_numbers")),
        sqlite_autoincrement=True,
    )
    for table in ("jobs", "avatars"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column("number", sa.Integer(), nullable=True))
            batch_op.create_unique_constraint(batch_op.f(f"uq_{table}_number"), ["number"])


def downgrade() -> None:
    for table in ("avatars", "jobs"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_constraint(batch_op.f(f"uq_{table}_number"), type_="unique")
            batch_op.drop_column("number")
    op.drop_table("public_numbers")
