"""core: users, api keys, credit ledger, processing history

Revision ID: 0001
Revises:
Create Date: 2026-11-22 03:32:36.066866
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("is_active", sa.Boolean(), nullable=False),
        sa.Column("plan", sa.String(length=32), nullable=False),
        sa.Column("credits", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("credits >= 0", name=op.f("ck_users_credits_not_negative")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
    )
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_users_email"), ["email"], unique=True)

    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_api_keys_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
    )
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_api_keys_user_id"), ["user_id"], unique=False)

    op.create_table(
        "credit_reservations",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("amount", sa.Integer(), nullable=False),
        sa.Column("captured", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("purpose", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("settled_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("amount > 0", name=op.f("ck_credit_reservations_amount_positive")),
        sa.CheckConstraint(
            "captured >= 0 AND captured <= amount",
            name=op.f("ck_credit_reservations_captured_in_range"),
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_credit_reservations_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_credit_reservations")),
    )
    with op.batch_alter_table("credit_reservations", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_credit_reservations_status"), ["status"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_credit_reservations_user_id"), ["user_id"], unique=False
        )

    op.create_table(
        "processing_records",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("operation", sa.String(length=64), nullable=False),
        sa.Column("surface", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("credits_used", sa.Integer(), nullable=False),
        sa.Column("processing_time", sa.Float(), nullable=False),
        sa.Column("input_width", sa.Integer(), nullable=True),
        sa.Column("input_height", sa.Integer(), nullable=True),
        sa.Column("result_key", sa.String(length=255), nullable=True),
        sa.Column("result_format", sa.String(length=8), nullable=True),
        sa.Column("error", sa.String(length=500), nullable=True),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_processing_records_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_processing_records")),
    )
    with op.batch_alter_table("processing_records", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_processing_records_created_at"), ["created_at"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_processing_records_user_id"), ["user_id"], unique=False
        )

    op.create_table(
        "credit_ledger",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("delta", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("reservation_id", sa.String(length=32), nullable=True),
        sa.Column("memo", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["reservation_id"],
            ["credit_reservations.id"],
            name=op.f("fk_credit_ledger_reservation_id_credit_reservations"),
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_credit_ledger_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_credit_ledger")),
    )
    with op.batch_alter_table("credit_ledger", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_credit_ledger_reservation_id"), ["reservation_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_credit_ledger_user_id"), ["user_id"], unique=False)


def downgrade() -> None:

    with op.batch_alter_table("credit_ledger", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_credit_ledger_user_id"))
        batch_op.drop_index(batch_op.f("ix_credit_ledger_reservation_id"))

    op.drop_table("credit_ledger")
    with op.batch_alter_table("processing_records", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_processing_records_user_id"))
        batch_op.drop_index(batch_op.f("ix_processing_records_created_at"))

    op.drop_table("processing_records")
    with op.batch_alter_table("credit_reservations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_credit_reservations_user_id"))
        batch_op.drop_index(batch_op.f("ix_credit_reservations_status"))

    op.drop_table("credit_reservations")
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_api_keys_user_id"))

    op.drop_table("api_keys")
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_users_email"))

    op.drop_table("users")
