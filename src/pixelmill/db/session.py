"""Engine construction and transaction scopes.

SQLite runs in WAL mode with foreign keys on, and every transaction starts with
``BEGIN IMMEDIATE``: a deferred SQLite transaction that reads and then writes can fail with
``SQLITE_BUSY`` without waiting when another writer got in between, which would turn ordinary
concurrency into errors. Taking the write lock up front makes writers queue on the busy timeout
instead. PostgreSQL needs none of this: its row locks and conditional updates do the work.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import ClauseElement, Engine, Executable, Row, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.sql.compiler import SQLCompiler


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event below own transaction start.
        dbapi_connection.isolation_level = None
        cur = dbapi_connection.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        options = conn.get_execution_options()
        if options.get("pixelmill_autocommit", False):
            return  # each statement is its own implicit transaction (Database.query)
        conn.exec_driver_sql(
            "BEGIN" if options.get("pixelmill_readonly", False) else "BEGIN IMMEDIATE"
        )


# Sync endpoints run in AnyIO's thread pool (PIXELMILL_SYNC_THREADS, 8 by default), plus the
# engine pool, job workers and the maintenance thread: the connection pool must never be the
# smaller one, and 40 leaves room for raised settings.
POOL_SIZE = 40
POOL_OVERFLOW = 20


def make_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            from pathlib import Path

            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_size=POOL_SIZE,
            max_overflow=POOL_OVERFLOW,
        )
        _configure_sqlite(engine)
        return engine
    return create_engine(url, pool_size=POOL_SIZE, max_overflow=POOL_OVERFLOW, pool_pre_ping=True)


T = TypeVar("T")


@dataclass(frozen=True)
class _PlainSql:
    """A statement as its driver runs it: the SQL, the order of its parameters, and the values
    of those the statement fixes itself (literals)."""

    sql: str
    order: tuple[str, ...]
    fixed: dict[str, Any]


class Database:
    """The live database: an engine and a session factory. Built once at startup."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._plain: dict[int, tuple[Executable, _PlainSql | None]] = {}
        self.engine = make_engine(url)
        self.sessionmaker = sessionmaker(self.engine, expire_on_commit=False)
        # Reads take no write lock on SQLite (a plain deferred BEGIN); WAL lets them run beside
        # a writer.
        self.read_sessionmaker = sessionmaker(
            self.engine.execution_options(pixelmill_readonly=True), expire_on_commit=False
        )
        # One-statement reads (fetch_row) need no snapshot: on SQLite they skip the BEGIN.
        self.statement_engine = self.engine.execution_options(
            pixelmill_readonly=True, pixelmill_autocommit=True
        )

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """One unit of work: commits on success, rolls back on any exception."""
        session = self.sessionmaker()
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    async def transact(self, fn: Callable[[Session], T]) -> T:
        """Run ``fn`` in a transaction of its own on a worker thread, committed before this
        returns. Async code never touches the database on the event loop: on SQLite a
        ``BEGIN IMMEDIATE`` waiting there for the write lock would stall the loop, and with it
        the request that holds the lock and needs the loop to commit."""

        def run() -> T:
            with self.transaction() as session:
                return fn(session)

        return await asyncio.to_thread(run)

    async def fetch_row(
        self, statement: Executable, params: Mapping[str, Any]
    ) -> Sequence[Any] | None:
        """The first row of ONE read-only statement (prepared once by the caller, so only its
        parameters change), for an async endpoint on a hot path: a plain connection, no ORM
        session, no explicit transaction (the statement is its own).

        On SQLite it runs on the calling thread: in WAL mode a reader takes no lock that a
        writer holds, so it never waits for one (the rule that async code leaves the database
        to worker threads is about transactions that may wait for the write lock), and a
        thread hop would cost more than the read. Elsewhere it runs on a worker thread."""

        def run() -> Row[Any] | None:
            with self.statement_engine.connect() as conn:
                return conn.execute(statement, params).first()

        if self.is_sqlite:
            plain = self._plain_sql(statement)
            return run() if plain is None else self._sqlite_row(plain, params)
        return await asyncio.to_thread(run)

    def _plain_sql(self, statement: Executable) -> _PlainSql | None:
        """``statement`` compiled once for the driver, or None when a bound value or a column
        needs SQLAlchemy's type processing (then it goes through SQLAlchemy)."""
        key = id(statement)
        found = self._plain.get(key)
        if found is None:
            if not isinstance(statement, ClauseElement):
                self._plain[key] = (statement, None)
                return None
            compiled = statement.compile(dialect=self.engine.dialect)
            if not isinstance(compiled, SQLCompiler):
                self._plain[key] = (statement, None)
                return None
            columns = getattr(statement, "selected_columns", ())
            binds = list(compiled.binds.values())
            plain = (
                compiled.positiontup is not None
                and all(c.type.result_processor(self.engine.dialect, None) is None for c in columns)
                and all(b.type.bind_processor(self.engine.dialect) is None for b in binds)
            )
            found = (
                statement,
                _PlainSql(
                    str(compiled),
                    tuple(compiled.positiontup or ()),
                    {compiled.bind_names[b]: b.effective_value for b in binds if not b.required},
                )
                if plain
                else None,
            )
            self._plain[key] = found  # the statement is kept, so its id stays its own
        return found[1]

    def _sqlite_row(self, plain: _PlainSql, params: Mapping[str, Any]) -> tuple[Any, ...] | None:
        """One row straight from the driver on a pooled connection: a connection's own
        SQLAlchemy wrapper, its events and result processing cost more than the read itself on
        the authenticated hot path (bench/bench_account.py). The driver's autocommit mode
        (``isolation_level = None``) makes the SELECT its own transaction, as
        :meth:`fetch_row` says."""
        args = [params[name] if name in params else plain.fixed[name] for name in plain.order]
        raw = self.engine.raw_connection()
        try:
            cursor = raw.cursor()
            try:
                cursor.execute(plain.sql, args)
                row: tuple[Any, ...] | None = cursor.fetchone()
                return row
            finally:
                cursor.close()
        finally:
            raw.close()  # back to the pool

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only unit of work (never blocks on, nor blocks, SQLite writers)."""
        session = self.read_sessionmaker()
        try:
            yield session
        finally:
            # close() ends the transaction and detaches objects with their loaded state intact
            # (rollback() would expire them).
            session.close()

    def dispose(self) -> None:
        self.engine.dispose()
