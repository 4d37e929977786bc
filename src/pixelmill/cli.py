"""The ``pixelmill`` command: ``serve``, ``migrate``, ``worker`` and ``admin ...``."""

from __future__ import annotations

import secrets
import shutil
import sys
from pathlib import Path
from typing import Annotated, cast

import typer

from pixelmill.config import Settings
from pixelmill.model_commands import models

app = typer.Typer(help="pixelmill: a self-hostable, credit-billed image API.", no_args_is_help=True)
admin = typer.Typer(help="Account administration.", no_args_is_help=True)
app.add_typer(admin, name="admin")
app.add_typer(models, name="models")


def _settings() -> Settings:
    return Settings()


@app.command()
def migrate() -> None:
    """Apply database migrations up to the latest revision."""
    from pixelmill.db.migrate import upgrade

    settings = _settings()
    upgrade(settings.resolved_database_url)
    typer.echo(f"database migrated: {settings.resolved_database_url}")


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="interface to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port")] = 8000,
    workers: Annotated[int, typer.Option(help="uvicorn worker processes")] = 1,
    migrate: Annotated[
        bool,
        typer.Option(
            help="apply the migrations before serving; --no-migrate where a one-shot step "
            "migrates before the rollout (Kubernetes' migration Job): replicas never race for "
            "it, and /readyz stays 503 until the schema is at the latest migration"
        ),
    ] = True,
) -> None:
    """Run the HTTP server (migrates the database first, unless --no-migrate)."""
    import uvicorn

    from pixelmill.db.migrate import upgrade
    from pixelmill.observability.logs import configure_logging

    settings = _settings()
    # A taken port is said first: before migrating, the banner and loading the application.
    problem = port_problem(host, port)
    if problem is not None:
        typer.echo(f"pixelmill: {problem}", err=True)
        raise typer.Exit(1)
    if settings.metrics:
        _metrics_dir(workers)
    configure_logging(settings.log_format, settings.log_level)
    if migrate:
        typer.echo(f"pixelmill: migrating the database ({settings.resolved_database_url})")
        upgrade(settings.resolved_database_url)
    base = settings.public_base_url or f"http://{host}:{port}"
    typer.echo(
        f"""
pixelmill {_version()} on {base}  (database: {settings.resolved_database_url})

  Create an account (the response holds your API key, shown once):
    curl -s -X POST {base}/api/auth/register -H 'Content-Type: application/json' \\
         -d '{{"email": "you@example.com", "password": "choose-a-password"}}'
  Or from the shell (in this directory):  {_this_command()} admin create-user you@example.com
  Then:  curl -s {base}/api/v2/account -H 'Authorization: Bearer pk_live_...'
  API docs: {base}/docs  {base}/redoc   OpenAPI 3.0.3: {base}/.well-known/openapi.json

pixelmill: loading the application (a few seconds); a line saying it is ready follows
"""
    )
    json_logs = settings.log_format == "json"
    _announce_when_ready(host, port, base)
    uvicorn.run(
        "pixelmill.asgi:app",
        host=host,
        port=port,
        workers=workers,
        proxy_headers=True,
        log_level=settings.log_level.lower(),
        # JSON: our handler formats uvicorn's lines too, and the access line is the request
        # middleware's (with route, status, duration and request id).
        log_config=None if json_logs else uvicorn.config.LOGGING_CONFIG,
        access_log=not json_logs,
    )


READY = "pixelmill: ready on "
"""The start of the line ``serve`` prints once the server answers (``pixelmill: ready on
http://HOST:PORT``); nothing printed before it contains this text."""


def port_problem(host: str, port: int) -> str | None:
    """Why ``serve`` could not listen on ``host:port`` (a bind tried and released, with the
    same ``SO_REUSEADDR`` uvicorn sets), or None when it can."""
    import errno
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return f"port {port} on {host} is in use; choose another with --port"
            return f"cannot listen on {host} port {port}: {exc.strerror or exc}"
    return None


def _announce_when_ready(host: str, port: int, base: str) -> None:
    """Print :data:`READY` and the base URL once ``/healthz`` answers 200 on ``host:port``
    (a daemon thread polling it), so a script can wait for that line."""
    import threading
    import time
    import urllib.request

    local = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)  # noqa: S104 (a client)
    url = f"http://{'[' + local + ']' if ':' in local else local}:{port}/healthz"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy

    def watch() -> None:
        while True:
            try:
                with opener.open(url, timeout=2) as answer:
                    if answer.status == 200:
                        typer.echo(f"{READY}{base}")
                        return
            except OSError:
                pass
            time.sleep(0.2)

    threading.Thread(target=watch, name="pixelmill-ready", daemon=True).start()


def _metrics_dir(workers: int) -> None:
    """Several worker processes share one ``PROMETHEUS_MULTIPROC_DIR`` (a fresh temporary
    folder unless the operator named one), emptied of the last run's values before they
    start."""
    import os
    import tempfile

    from pixelmill.observability.multiproc import MULTIPROC_ENV, prepare_multiprocess_dir

    folder = os.environ.get(MULTIPROC_ENV)
    if not folder and workers > 1:
        folder = tempfile.mkdtemp(prefix="pixelmill-metrics-")
        os.environ[MULTIPROC_ENV] = folder
    if folder:
        prepare_multiprocess_dir(Path(folder))


@app.command()
def worker(
    concurrency: Annotated[
        int | None, typer.Option(help="tasks run at once (default: PIXELMILL_JOB_WORKERS)")
    ] = None,
    lane: Annotated[
        list[str] | None,
        typer.Option(help="jobs and/or webhooks (repeatable; default: both)"),
    ] = None,
) -> None:
    """Run a Celery worker (PIXELMILL_QUEUE=celery, PIXELMILL_REDIS_URL) for jobs and webhook
    deliveries, or for one lane (`--lane webhooks`: slow receivers never hold a job worker)."""
    from pixelmill.queue.base import LANES

    if _settings().metrics:
        _metrics_dir(1)  # before the metrics are first imported: a named folder starts empty
    from pixelmill.worker import run_worker

    lanes = tuple(lane or LANES)
    unknown = sorted(set(lanes) - set(LANES))
    if unknown:
        raise typer.BadParameter(f"unknown lane {unknown[0]!r}; lanes: {', '.join(LANES)}")
    run_worker(_settings(), concurrency, lanes)


@app.command("worker-health")
def worker_health(
    timeout: Annotated[
        float, typer.Option(min=0.1, help="seconds to wait for the broker and for an answer")
    ] = 5.0,
) -> None:
    """Exit 0 when a `pixelmill worker` on this host answers a ping through its broker within
    the timeout, 1 otherwise (not running, wedged, or cut off from Redis): the compose
    healthcheck and the Kubernetes liveness probe of the worker."""
    from pixelmill.queue.health import check_worker

    health = check_worker(_settings(), timeout)
    typer.echo(("healthy: " if health.healthy else "unhealthy: ") + health.detail)
    raise typer.Exit(0 if health.healthy else 1)


def _this_command() -> str:
    """This ``pixelmill`` as the shell that started it can run it again: ``pixelmill`` when
    that is the one on PATH, else its path (``.venv/bin/pixelmill`` from the project's
    folder), else ``python -m pixelmill`` with this interpreter."""
    exe = Path(sys.argv[0])
    if exe.name != "pixelmill" or not exe.is_file():
        return f"{sys.executable} -m pixelmill"
    on_path = shutil.which("pixelmill")
    if on_path and Path(on_path).resolve() == exe.resolve():
        return "pixelmill"
    absolute = exe.absolute()
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)


def _version() -> str:
    from pixelmill import __version__

    return __version__


@admin.command("create-user")
def create_user(
    email: str,
    password: Annotated[
        str | None, typer.Option(help="password; a random one is generated if omitted")
    ] = None,
) -> None:
    """Create an account and print its API key (shown once)."""
    from pixelmill.accounts import service as accounts
    from pixelmill.db.session import Database

    settings = _settings()
    db = Database(settings.resolved_database_url)
    pw = password or secrets.token_urlsafe(12)
    with db.transaction() as session:
        new = accounts.register(
            session, settings.resolved_secret_key, email, pw, settings.free_credits
        )
        typer.echo(f"user {new.user.email} (id {new.user.id}), {new.user.credits} credits")
    if password is None:
        typer.echo(f"password: {pw}")
    typer.echo(f"api key:  {new.api_key}")
    db.dispose()


@admin.command("grant-credits")
def grant_credits(
    email: str,
    amount: int,
    purchase: Annotated[
        bool,
        typer.Option(
            help="record as a purchase (counts in total_purchased; first pays what refunded "
            "packs left owed)"
        ),
    ] = False,
) -> None:
    """Add credits to an account (through the ledger)."""
    from pixelmill.accounts import service as accounts
    from pixelmill.billing import purchases
    from pixelmill.credits import ledger
    from pixelmill.db.session import Database

    if amount <= 0:
        raise typer.BadParameter("amount must be positive")
    settings = _settings()
    db = Database(settings.resolved_database_url)
    collected = 0
    with db.transaction() as session:
        user = accounts.require_by_email(session, email)
        if purchase:
            # Money arrived: it first pays what refunded packs left owed (docs/billing.md).
            collected = purchases.grant_purchased(
                session, user.id, amount, memo="admin", source="admin grant-credits --purchase"
            )
        else:
            ledger.grant(session, user.id, amount, kind="grant", memo="admin")
        new_balance = ledger.balance(session, user.id)
        still_owed = purchases.owed(session, user.id)
    typer.echo(f"{email}: balance {new_balance}")
    if collected:
        typer.echo(f"{collected} owed credits collected (refunded packs)")
    if still_owed:
        typer.echo(f"still owed: {still_owed} credits (refunded packs)")
    db.dispose()


@admin.command("usage")
def usage(
    start: Annotated[
        str | None,
        typer.Option("--from", help="first day, YYYY-MM-DD (UTC); default: this month's first"),
    ] = None,
    end: Annotated[
        str | None, typer.Option("--to", help="last day, YYYY-MM-DD (included); default: today")
    ] = None,
    email: Annotated[str | None, typer.Option(help="one account; default: all")] = None,
    group_by: Annotated[str, typer.Option(help="day or operation")] = "operation",
    as_csv: Annotated[bool, typer.Option("--csv", help="CSV instead of a table")] = False,
) -> None:
    """Credits spent on work across accounts (charges less refunds of failed work); grants and
    purchases are listed apart, as they are not usage. Without --from and --to: this month so
    far (UTC)."""
    from datetime import UTC, date, datetime

    from pixelmill.accounts import service as accounts
    from pixelmill.billing.usage import GroupBy, usage_report
    from pixelmill.db.session import Database

    if group_by not in ("day", "operation"):
        raise typer.BadParameter("group-by is day or operation")
    today = datetime.now(UTC).date()
    try:
        first = date.fromisoformat(start) if start else today.replace(day=1)
        last = date.fromisoformat(end) if end else today
    except ValueError as exc:
        raise typer.BadParameter(f"dates are YYYY-MM-DD: {exc}") from None
    db = Database(_settings().resolved_database_url)
    with db.read() as session:
        uid = accounts.require_by_email(session, email).id if email else None
        report = usage_report(session, first, last, cast(GroupBy, group_by), uid)
    db.dispose()
    if as_csv:
        typer.echo(report.as_csv(), nl=False)
        return
    for key, credits in report.rows:
        typer.echo(f"{key:<24} {credits:>8}")
    typer.echo(f"{'total':<24} {report.total_credits:>8}")
    typer.echo(f"{'grants and purchases':<24} {report.other_entries:>8}")


@admin.command("set-plan")
def set_plan(email: str, plan: str) -> None:
    """Change an account's plan (free, starter, pro, enterprise)."""
    from pixelmill.accounts import service as accounts
    from pixelmill.db.session import Database

    settings = _settings()
    db = Database(settings.resolved_database_url)
    with db.transaction() as session:
        user = accounts.require_by_email(session, email)
        accounts.set_plan(session, user, plan)
    typer.echo(f"{email}: plan {plan}")
    db.dispose()


@admin.command("create-key")
def create_key(email: str) -> None:
    """Issue an additional API key for an account and print it (shown once)."""
    from pixelmill.accounts import service as accounts
    from pixelmill.db.session import Database

    settings = _settings()
    db = Database(settings.resolved_database_url)
    with db.transaction() as session:
        user = accounts.require_by_email(session, email)
        key = accounts.create_api_key(session, settings.resolved_secret_key, user.id)
    typer.echo(key)
    db.dispose()


def main() -> None:
    from pixelmill.errors import AppError

    try:
        app()
    except AppError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise SystemExit(1) from exc
