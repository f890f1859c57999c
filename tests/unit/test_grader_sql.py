"""SQL in any common dialect (graders/sql.py): SQLite first, then DuckDB over a typed copy of the fixture, as
written or transpiled by sqlglot; result rows compared with the reference's."""

from __future__ import annotations

import pytest

from bench_tui.graders.grade import grade_transcript
from bench_tui.graders.pack import load_pack
from bench_tui.graders.simulator import simulate
from bench_tui.graders.sql import run_sql

FX = """CREATE TABLE orders (id INTEGER PRIMARY KEY, created_at TEXT, total_eur REAL);
INSERT INTO orders (created_at, total_eur) VALUES
  ('2024-03-10T09:00:00', 10), ('2025-02-28T23:59:59', 11), ('2025-03-01T00:00:00', 12),
  ('2025-03-15T12:00:00', 13), ('2025-03-31T23:30:00', 14), ('2025-04-01T00:00:00', 15);"""
REF = "SELECT COUNT(*) FROM orders WHERE created_at >= '2025-03-01' AND created_at < '2025-04-01'"


@pytest.mark.parametrize(
    "sql",
    [
        REF,
        "SELECT COUNT(*) FROM orders WHERE created_at >= TIMESTAMP '2025-03-01 00:00:00'"
        " AND created_at < TIMESTAMP '2025-04-01 00:00:00'",
        "SELECT COUNT(*) FROM orders WHERE date_trunc('month', created_at) = DATE '2025-03-01'",
        "SELECT COUNT(*) FROM orders WHERE EXTRACT(YEAR FROM created_at) = 2025 AND EXTRACT(MONTH FROM created_at) = 3",
        "SELECT COUNT(*) FROM orders WHERE created_at::date BETWEEN '2025-03-01' AND '2025-03-31'",
        "SELECT COUNT(*) FROM orders WHERE DATE_FORMAT(created_at, '%Y-%m') = '2025-03'",
        "SELECT COUNT(*) FROM orders WHERE YEAR(created_at) = 2025 AND MONTH(created_at) = 3",
    ],
)
def test_a_month_count_in_any_common_dialect_returns_the_reference_rows(sql):
    assert run_sql(sql, FX) == ([(3,)], "")


def test_a_wrong_query_in_another_dialect_returns_other_rows():
    rows, _ = run_sql(
        "SELECT COUNT(*) FROM orders WHERE date_trunc('year', created_at) = DATE '2025-01-01'", FX
    )
    assert rows == [(5,)]


@pytest.mark.parametrize(
    "sql",
    ["DELETE FROM orders", "DROP TABLE orders", "SELECT * FROM read_csv('/etc/passwd')", "SELEC nonsense"],
)
def test_writes_file_access_and_nonsense_do_not_run(sql):
    rows, err = run_sql(sql, FX)
    assert rows is None and err
    assert run_sql(REF, FX)[0] == [(3,)]


def test_tc49_passes_a_postgres_query():
    pack = load_pack("standard")
    sc = pack.scenario("TC-49")
    q = (
        "SELECT COUNT(*) FROM orders WHERE created_at >= TIMESTAMP '2025-03-01' "
        "AND created_at < TIMESTAMP '2025-04-01'"
    )
    turns = [
        {"tool_calls": [{"name": "query_database", "arguments": {"sql": q}}]},
        {"content": "1,287 orders were placed in March 2025."},
    ]
    r = grade_transcript(sc, pack, simulate(sc, pack, turns, "lenient"), "lenient")
    assert r.verdict == "pass", r.reasons


def test_run_sql_is_read_only_on_the_fixture():
    fx = "CREATE TABLE t (d TEXT); INSERT INTO t VALUES ('2025-03-01'), ('2025-03-31T23:00'), ('2025-04-01');"
    assert run_sql("SELECT COUNT(*) FROM t WHERE d >= '2025-03-01' AND d < '2025-04-01'", fx)[0] == [(2,)]
    assert run_sql("SELECT COUNT(*) FROM t WHERE d BETWEEN '2025-03-01' AND '2025-03-31'", fx)[0] == [(1,)]
    rows, err = run_sql("DELETE FROM t", fx)
    assert rows is None and "readonly" in err.replace("-", "").lower()


def test_a_duckdb_function_sqlite_reads_otherwise_is_run_as_duckdb_when_the_rows_differ():
    duck = "SELECT COUNT(*) FROM orders WHERE strftime(created_at, '%Y-%m') = '2025-03'"
    ref, _ = run_sql(REF, FX)
    # SQLite runs it (the column read as the format) to other rows; alone, that is what it returns
    assert run_sql(duck, FX)[0] == [(0,)] != ref
    # against the reference's rows it is also run as DuckDB reads it, where it is right
    assert run_sql(duck, FX, expect=ref) == (ref, "")
    # a query wrong in both stays wrong, with SQLite's rows
    wrong = "SELECT COUNT(*) FROM orders WHERE strftime(created_at, '%Y-%m') = '2025-02'"
    assert run_sql(wrong, FX, expect=ref)[0] == [(0,)]
