"""purchases: credit packs bought through Stripe Checkout, and the Stripe events handled

Revision ID: 0010_purchases
Revises: 0009
Create Date: 2026-11-28 02:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_purchases"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "purchases",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("pack_id", sa.String(length=32), nullable=False),
        sa.Column("credits", sa.Integer(), nullable=False),
        sa.Column("price_cents", sa.Integer(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("session_id", sa.String(length=255), nullable=True),
        sa.Column("payment_intent", sa.String(length=255), nullable=True),
        sa.Column("refunded_cents", sa.Integer(), nullable=False),
        sa.Column("refunded_credits", sa.Integer(), nullable=False),
        sa.Column("owed_credits", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("paid_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("credits > 0", name=op.f("ck_purchases_credits_positive")),
        sa.CheckConstraint(
            "refunded_credits >= 0 AND owed_credits >= 0",
            name=op.f("ck_purchases_refunds_positive"),
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_purchases_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_purchases")),
        sa.UniqueConstraint("session_id", name=op.f("uq_purchases_session_id")),
    )
    op.create_index(op.f("ix_purchases_user_id"), "purchases", ["user_id"], unique=False)
    op.create_index(
        op.f("ix_purchases_payment_intent"), "purchases", ["payment_intent"], unique=False
    )
    op.create_table(
        "stripe_events",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("purchase_id", sa.String(length=32), nullable=True),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_stripe_events")),
    )


def downgrade() -> None:
    op.drop_table("stripe_events")
    op.drop_index(op.f("ix_purchases_payment_intent"), table_name="purchases")
    op.drop_index(op.f("ix_purchases_user_id"), table_name="purchases")
    op.drop_table("purchases")
