"""runs/history.sqlite: index, idempotent re-index, rebuild from run dirs, filters, CLI."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_tui.cli.reports import history
from bench_tui.reports import history as h
from bench_tui.reports.render import write_reports
from fixtures_runs import make_run_dir

DAY = 86400.0


@pytest.fixture
def runs(tmp_path):
    root = tmp_path / "runs"
    a = make_run_dir(root, run_id="20261120T100000Z_old", ts0=1795600000.0)  # 2026-11-25
    b = make_run_dir(root, run_id="20261202T220000Z_new", scale={"mtp": 0.9})
    c = make_run_dir(
        root, run_id="20261202T230000Z_nosc", with_scenarios=False, finished=False, ts0=1796252400.0
    )
    return root, a, b, c


def _count(db: Path, table: str, key: str | None = None) -> int:
    con = sqlite3.connect(db)
    try:
        sql = f"SELECT COUNT(*) FROM {table}" + (" WHERE run_key = ?" if key else "")
        return con.execute(sql, (key,) if key else ()).fetchone()[0]
    finally:
        con.close()


def test_index_is_idempotent(runs):
    root, a, _, _ = runs
    db = root / h.DB_NAME
    h.index_run(a, db)
    first = (_count(db, "runs"), _count(db, "points"), _count(db, "scenarios"), _count(db, "scores"))
    assert first == (1, 13, 12, 2)
    h.index_run(a, db)
    h.index_run(a, db)
    assert (_count(db, "runs"), _count(db, "points"), _count(db, "scenarios"), _count(db, "scores")) == first


def test_write_reports_indexes_the_run(runs):
    root, a, b, _ = runs
    write_reports(a)
    write_reports(b)
    db = root / h.DB_NAME
    assert _count(db, "runs") == 2
    rows = h.query(db)
    assert [r["run_key"] for r in rows] == [b.name, a.name]  # newest first
    pts = {p["point_id"]: p for p in rows[1]["points"]}
    p = pts["vllm.base/sweep/pp512-tg64-d2048-c4"]
    assert p["status"] == "degraded" and p["depth"] == 2048 and p["concurrency"] == 4
    assert p["eff_tg_tps"] == pytest.approx(19.22, abs=0.1) and p["cache"] == "warm"
    assert pts["vllm.mtp/accept/code-d0"]["spec_acceptance_rate"] == pytest.approx(0.78)
    sc = {(s["engine"], s["variant"]): s for s in rows[1]["scores"]}
    assert sc[("vllm", "mtp")]["raw_score"] == 50.0 and sc[("vllm", "mtp")]["adjusted_score"] == 66.67
    scen = h.scenario_rows(db, a.name)
    tc02 = next(s for s in scen if s["scenario_id"] == "TC-02" and s["variant"] == "mtp")
    assert (tc02["raw_verdict"], tc02["adjusted_verdict"], tc02["overridden"]) == ("fail", "pass", 1)


def test_rebuild_and_filters(runs):
    root, a, b, c = runs
    db = root / h.DB_NAME
    db.write_bytes(b"garbage, not sqlite")
    n, problems = h.rebuild(root)
    assert n == 3 and problems == []
    assert {r["run_key"] for r in h.query(db)} == {a.name, b.name, c.name}
    # workload filter: only runs with points of that workload
    assert {r["run_key"] for r in h.query(db, workload="tools")} == {a.name, b.name}
    only_tools = h.query(db, workload="tools")[0]
    assert {p["workload"] for p in only_tools["points"]} == {"tools"}
    # engine / engine.variant filters narrow the points and scores
    r = h.query(db, engine="vllm.mtp")
    assert len(r) == 3 and all(p["variant"] == "mtp" for x in r for p in x["points"])
    assert all(s["variant"] == "mtp" for x in r for s in x["scores"])
    assert h.query(db, engine="sglang") == []
    # since: the old run (2026-11-25) drops out
    since = h.parse_since("2026-12-01")
    assert {r["run_key"] for r in h.query(db, since=since)} == {b.name, c.name}
    assert h.parse_since("7d", now=10 * DAY) == pytest.approx(3 * DAY)
    assert h.parse_since("12h", now=DAY) == pytest.approx(DAY / 2)
    with pytest.raises(h.HistoryError, match="--since 'yesterday'"):
        h.parse_since("yesterday")
    statuses = {r["run_key"]: r["status"] for r in h.query(db)}
    assert statuses[c.name] == "incomplete" and statuses[a.name] == "completed"


def test_rebuild_skips_broken_runs(runs):
    root, *_ = runs
    bad = root / "20261203T000000Z_bad"
    bad.mkdir()
    (bad / "events.jsonl").write_text("")
    (root / "not-a-run").mkdir()
    n, problems = h.rebuild(root)
    assert n == 4 and problems == []  # an empty run is indexed (incomplete), a non-run dir ignored
    st = {r["run_key"]: r["status"] for r in h.query(root / h.DB_NAME)}
    assert st[bad.name] == "incomplete" and "not-a-run" not in st


def test_history_cli(runs):
    root, a, b, c = runs
    r = CliRunner().invoke(history, ["--runs-dir", str(root)])  # no db yet: built on the fly
    assert r.exit_code == 0, r.output
    assert a.name in r.output and b.name in r.output and c.name in r.output
    assert (root / h.DB_NAME).is_file()
    r = CliRunner().invoke(history, ["--runs-dir", str(root), "--workload", "tools", "--json"])
    data = json.loads(r.output)
    assert {x["run_key"] for x in data} == {a.name, b.name}
    r = CliRunner().invoke(
        history,
        ["--runs-dir", str(root), "--rebuild", "--since", "2026-12-01", "--points", "--engine", "vllm.base"],
    )
    assert r.exit_code == 0, r.output
    assert a.name not in r.output and "vllm.base/sweep/pp512-tg64-d2048-c4" in r.output
    assert "vllm.mtp/" not in r.output
    r = CliRunner().invoke(history, ["--runs-dir", str(root), "--since", "soon"])
    assert r.exit_code == 2 and "Traceback" not in r.output
    r = CliRunner().invoke(history, ["--runs-dir", str(root / "missing")])
    assert r.exit_code == 2 and "no such runs directory" in r.output
