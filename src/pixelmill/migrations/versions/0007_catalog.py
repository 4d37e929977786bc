"""the JWT catalog's fields of products: integer id, brand, status, collection

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 21:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("products", schema=None) as batch_op:
        batch_op.add_column(sa.Column("number", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("brand", sa.String(length=255), nullable=True))
        batch_op.add_column(
            sa.Column("status", sa.String(length=16), nullable=False, server_default="active")
        )
        batch_op.add_column(sa.Column("collection_id", sa.Integer(), nullable=True))
        batch_op.create_unique_constraint(batch_op.f("uq_products_number"), ["number"])
        batch_op.create_index(batch_op.f("ix_products_brand"), ["brand"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_products_collection_id"), ["collection_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("products", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_products_collection_id"))
        batch_op.drop_index(batch_op.f("ix_products_brand"))
        batch_op.drop_constraint(batch_op.f("uq_products_number"), type_="unique")
        for column in ("collection_id", "status", "brand", "number"):
            batch_op.drop_column(column)
