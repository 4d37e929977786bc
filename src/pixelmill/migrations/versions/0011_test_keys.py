"""test keys: api_keys.test, and the test flag of the jobs and batches they create (a test
batch holds no reservation)

Revision ID: 0011_test_keys
Revises: 0010_purchases
Create Date: 2026-11-28 03:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_test_keys"
down_revision: str | None = "0010_purchases"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    for table in ("api_keys", "jobs", "batches"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(
                sa.Column("test", sa.Boolean(), nullable=False, server_default=sa.false())
            )
    with op.batch_alter_table("batches", schema=None) as batch_op:
        batch_op.alter_column("reservation_id", existing_type=sa.String(length=32), nullable=True)


def downgrade() -> None:
    # Test batches hold no reservation; they go with the column that tells them apart.
    op.execute("DELETE FROM batches WHERE reservation_id IS NULL")
    with op.batch_alter_table("batches", schema=None) as batch_op:
        batch_op.alter_column("reservation_id", existing_type=sa.String(length=32), nullable=False)
    for table in ("batches", "jobs", "api_keys"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column("test")
