"""storefront: activity log and enrichment jobs

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 21:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "storefront_activities",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("shop_domain", sa.String(length=255), nullable=False),
        sa.Column("activity_type", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("products", sa.JSON(), nullable=False),
        sa.Column("products_count", sa.Integer(), nullable=False),
        sa.Column("has_images", sa.Boolean(), nullable=False),
        sa.Column("credits_used", sa.Integer(), nullable=False),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("job_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_storefront_activities_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_storefront_activities")),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "ix_storefront_activities_owner",
        "storefront_activities",
        ["user_id", "shop_domain", "created_at"],
        unique=False,
    )
    op.create_table(
        "enrichment_jobs",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("job_id", sa.String(length=40), nullable=True),
        sa.Column("shop_domain", sa.String(length=255), nullable=False),
        sa.Column("run_by", sa.String(length=8), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("enrichments", sa.JSON(), nullable=False),
        sa.Column("image_operations", sa.JSON(), nullable=False),
        sa.Column("products", sa.JSON(), nullable=False),
        sa.Column("products_total", sa.Integer(), nullable=False),
        sa.Column("products_completed", sa.Integer(), nullable=False),
        sa.Column("products_failed", sa.Integer(), nullable=False),
        sa.Column("credits_reserved", sa.Integer(), nullable=False),
        sa.Column("credits_used", sa.Integer(), nullable=False),
        sa.Column("results_json", sa.Text(), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("webhook_url", sa.Text(), nullable=True),
        sa.Column("activity_id", sa.Integer(), nullable=True),
        sa.Column("settled_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["job_id"],
            ["jobs.id"],
            name=op.f("fk_enrichment_jobs_job_id_jobs"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_enrichment_jobs_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_enrichment_jobs")),
        sa.UniqueConstraint("job_id", name=op.f("uq_enrichment_jobs_job_id")),
    )
    op.create_index(
        "ix_enrichment_jobs_owner",
        "enrichment_jobs",
        ["user_id", "shop_domain", "created_at"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_enrichment_jobs_owner", table_name="enrichment_jobs")
    op.drop_table("enrichment_jobs")
    op.drop_index("ix_storefront_activities_owner", table_name="storefront_activities")
    op.drop_table("storefront_activities")
