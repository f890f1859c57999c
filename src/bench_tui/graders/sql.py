"""A model's SQL run against a scenario's fixture, in any common dialect.

The fixture is SQLite DDL and inserts. A query runs on SQLite first (read-only once the fixture is built). A
query SQLite cannot run (typed literals ``TIMESTAMP '2025-03-01'``, ``date_trunc``, ``EXTRACT``, ``::date``,
MySQL's ``DATE_FORMAT``) runs on DuckDB over a copy of the fixture whose text columns holding ISO dates or
timestamps are typed as such, as written or transpiled by sqlglot from the common dialects. Only a query (a
SELECT, a WITH) runs there, with external access (files, network) switched off. Both are maintained
libraries; only the column typing is written here.

A fixture column declared ``COLLATE iso_time`` compares as the TIMESTAMP a real schema would hold, not as text:
a date alone is its midnight, and "T" or a space between date and time, with or without seconds, are the same
instant, so ``created_at <= '2025-04-01'`` takes in an order at 2025-04-01T00:00:00 as on PostgreSQL.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import re
import sqlite3
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp

Rows = list[tuple[Any, ...]]
DIALECTS = ("postgres", "mysql", "tsql", "snowflake", "bigquery", "oracle")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ISO_TS = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$")
_ISO_PARTS = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2})(:\d{2})?(\.\d+)?)?\s*$")


def _instant(text: str) -> str:
    """An ISO date or timestamp written so that text order is time order ("2025-04-01" ->
    "2025-04-01T00:00:00.000000"); any other text as it is."""
    m = _ISO_PARTS.match(text)
    if m is None:
        return text
    day, hm, sec, frac = m.groups()
    return f"{day}T{hm or '00:00'}{sec or ':00'}{(frac or '.').ljust(7, '0')[:7]}"


def _iso_time(a: str, b: str) -> int:
    x, y = _instant(a), _instant(b)
    return (x > y) - (x < y)


def run_sql(sql: str, fixture: str, expect: Rows | None = None) -> tuple[Rows | None, str]:
    """(rows, "") or (None, why it did not run).

    With ``expect`` (the reference's rows), a query SQLite runs to other rows is also run as DuckDB reads it: a
    function both know with another meaning (DuckDB's ``strftime(created_at, '%Y-%m')`` is SQLite's
    ``strftime('%Y-%m', created_at)``; SQLite runs the first form too, reading the column as the format) is
    right where it returns the expected rows in the dialect it was written for."""
    con = sqlite3.connect(":memory:")
    con.create_collation("iso_time", _iso_time)
    try:
        con.executescript(fixture)
        con.execute("PRAGMA query_only = ON")
        try:
            rows = con.execute(sql).fetchall()
        except sqlite3.Error as exc:
            first = f"{type(exc).__name__}: {exc}"
        else:
            if expect is not None and rows != expect:
                other, _ = _other_dialects(sql, con)
                if other == expect:
                    return other, ""
            return rows, ""
        duck, note = _other_dialects(sql, con)
        return (duck, "") if duck is not None else (None, first + note)
    except sqlite3.Error as exc:
        return None, f"{type(exc).__name__}: {exc}"
    finally:
        con.close()


def _is_query(sql: str) -> bool:
    try:
        parsed = sqlglot.parse(sql)
    except sqlglot.errors.SqlglotError:
        return True  # sqlglot cannot read it; DuckDB may (it refuses writes below anyway)
    return len(parsed) == 1 and isinstance(parsed[0], exp.Query)


def _typed_copy(src: sqlite3.Connection) -> duckdb.DuckDBPyConnection:
    """The fixture in DuckDB, text columns of ISO dates / timestamps typed DATE / TIMESTAMP."""
    db = duckdb.connect(":memory:")
    tables = [r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()]
    for t in tables:
        cols = src.execute(f'PRAGMA table_info("{t}")').fetchall()
        rows = src.execute(f'SELECT * FROM "{t}"').fetchall()
        types = []
        for i, c in enumerate(cols):
            vals = [r[i] for r in rows if r[i] is not None]
            decl = str(c[2]).upper()
            if vals and all(isinstance(v, str) and _ISO_DATE.match(v) for v in vals):
                types.append("DATE")
            elif vals and all(isinstance(v, str) and _ISO_TS.match(v) for v in vals):
                types.append("TIMESTAMP")
            elif "INT" in decl:
                types.append("BIGINT")
            elif any(k in decl for k in ("REAL", "FLOA", "DOUB", "NUM", "DEC")):
                types.append("DOUBLE")
            else:
                types.append("VARCHAR")
        db.execute(
            f'CREATE TABLE "{t}" ({", ".join(f"{c[1]} {ty}" for c, ty in zip(cols, types, strict=True))})'
        )
        if rows:
            db.executemany(f'INSERT INTO "{t}" VALUES ({", ".join("?" for _ in cols)})', rows)
    db.execute("SET enable_external_access = false")
    db.execute("SET lock_configuration = true")
    return db


def _plain(v: Any) -> Any:
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, _dt.datetime):
        return v.isoformat()
    if isinstance(v, _dt.date):
        return v.isoformat()
    return v


def _other_dialects(sql: str, src: sqlite3.Connection) -> tuple[Rows | None, str]:
    if not _is_query(sql):
        return None, ""
    db = _typed_copy(src)
    try:
        candidates = [sql]
        for d in DIALECTS:
            try:
                candidates += sqlglot.transpile(sql, read=d, write="duckdb")
            except sqlglot.errors.SqlglotError:
                continue
        for q in dict.fromkeys(candidates):
            try:
                rows = db.execute(q).fetchall()
            except duckdb.Error:
                continue
            return [tuple(_plain(v) for v in r) for r in rows], ""
        return None, " (nor in DuckDB, as written or read as a common dialect)"
    finally:
        db.close()


__all__ = ["DIALECTS", "run_sql"]
