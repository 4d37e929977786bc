"""synchronous reservations: heartbeat and the context of their history row

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("credit_reservations", schema=None) as batch_op:
        # Renewed while a synchronous run is alive; NULL (rows from before this revision) reads
        # as created_at.
        batch_op.add_column(sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))
        # What the sweeper needs to write the failed history row of a run that died.
        batch_op.add_column(sa.Column("context", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("credit_reservations", schema=None) as batch_op:
        batch_op.drop_column("context")
        batch_op.drop_column("heartbeat_at")
