"""avatars as a real resource; job parameters

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 17:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("avatars", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("kind", sa.String(length=16), nullable=False, server_default="guided")
        )
        batch_op.add_column(sa.Column("prompt", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("style", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("characteristics", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("landmarks", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("parent_id", sa.String(length=36), nullable=True))
        batch_op.add_column(sa.Column("job_id", sa.String(length=40), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_avatars_parent_id_avatars"),
            "avatars",
            ["parent_id"],
            ["id"],
            ondelete="SET NULL",
        )
        batch_op.create_index(batch_op.f("ix_avatars_job_id"), ["job_id"], unique=False)
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("params", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_column("params")
    with op.batch_alter_table("avatars", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_avatars_job_id"))
        batch_op.drop_constraint(batch_op.f("fk_avatars_parent_id_avatars"), type_="foreignkey")
        for column in ("job_id", "parent_id", "landmarks", "characteristics", "style", "prompt"):
            batch_op.drop_column(column)
        batch_op.drop_column("kind")
