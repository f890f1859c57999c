"""``runs/history.sqlite``: an index of runs, points and scenario results for fast history queries.

The index is a cache: every row comes from a run directory (``load_run``), ``rebuild`` recreates it from
the run directories, and indexing a run again replaces its rows (idempotent). Runs are keyed by their
directory name (unique inside a runs directory).
"""

from __future__ import annotations

import datetime as _dt
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

DB_NAME = "history.sqlite"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS runs (
  run_key TEXT PRIMARY KEY, run_id TEXT, run_dir TEXT, spec_name TEXT, title TEXT, status TEXT,
  started_ts REAL, finished_ts REAL, points_done INTEGER, points_total INTEGER,
  engines TEXT, workloads TEXT, caveats INTEGER, indexed_ts REAL
);
CREATE TABLE IF NOT EXISTS points (
  run_key TEXT, point_id TEXT, engine TEXT, variant TEXT, workload TEXT, kind TEXT, status TEXT,
  pp INTEGER, tg INTEGER, depth INTEGER, concurrency INTEGER, cache TEXT,
  eff_tg_tps REAL, eff_tg_ci_low REAL, eff_tg_ci_high REAL, agg_tg_tps REAL, ttft_ms REAL,
  prefill_tps REAL, decode_tps REAL, server_prefill_tps REAL, server_decode_tps REAL,
  prefix_cache_hit_rate REAL, spec_acceptance_rate REAL, ok INTEGER, failed INTEGER, flags TEXT,
  PRIMARY KEY (run_key, point_id)
);
CREATE TABLE IF NOT EXISTS scores (
  run_key TEXT, engine TEXT, variant TEXT, workload TEXT, pack TEXT, raw_score REAL, adjusted_score REAL,
  deployability REAL, scored INTEGER, total INTEGER,
  PRIMARY KEY (run_key, engine, variant, workload)
);
CREATE TABLE IF NOT EXISTS scenarios (
  run_key TEXT, engine TEXT, variant TEXT, workload TEXT, scenario_id TEXT, trial INTEGER, category TEXT,
  difficulty TEXT, outcome TEXT, raw_verdict TEXT, adjusted_verdict TEXT, overridden INTEGER,
  PRIMARY KEY (run_key, engine, variant, workload, scenario_id, trial)
);
CREATE INDEX IF NOT EXISTS points_engine ON points (engine, variant);
CREATE INDEX IF NOT EXISTS points_workload ON points (workload);
"""


class HistoryError(Exception):
    """A history query that cannot be answered (message for the user)."""


def connect(db: Path | str) -> sqlite3.Connection:
    db = Path(db)
    db.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(str(db), timeout=10)
    con.row_factory = sqlite3.Row
    con.executescript(_SCHEMA)
    con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    return con


def _delete(con: sqlite3.Connection, key: str) -> None:
    for table in ("runs", "points", "scores", "scenarios"):
        con.execute(f"DELETE FROM {table} WHERE run_key = ?", (key,))  # noqa: S608 - fixed names


def index_run(run_dir: Path | str, db: Path | str | None = None, *, model: Any = None) -> str:
    """(Re-)index one run directory; returns its key. ``db`` default: ``<run_dir>/../history.sqlite``."""
    from bench_tui.reports.model import load_run

    run_dir = Path(run_dir)
    m = model if model is not None else load_run(run_dir)
    db = Path(db) if db is not None else run_dir.parent / DB_NAME
    key = run_dir.name
    con = connect(db)
    try:
        with con:
            _delete(con, key)
            engines = sorted({p.key for p in m.points} | set(m.engines))
            workloads = sorted({p.workload for p in m.points})
            con.execute(
                "INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (key, m.run_id, str(run_dir.resolve()), m.spec_name, m.title, m.status, m.started_ts,
                 m.finished_ts, m.points_done, m.points_total, ",".join(engines), ",".join(workloads),
                 len(m.caveats), time.time()),
            )  # fmt: skip
            for p in m.points:
                s = p.summary
                sv = s.server if s else None
                con.execute(
                    "INSERT INTO points VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (key, p.point_id, p.engine, p.variant, p.workload, p.kind, p.status, p.pp,
                     p.tg, p.depth if p.kind != "scenarios" else None,
                     p.concurrency if p.kind == "throughput" else None, s.cache if s else None,
                     s.eff_tg_tps.median if s else None, s.eff_tg_tps.ci_low if s else None,
                     s.eff_tg_tps.ci_high if s else None, s.agg_tg_tps if s else None,
                     s.ttft_ms.median if s else None, s.prefill_tps.median if s else None,
                     s.decode_tps.median if s else None, sv.prefill_tps if sv else None,
                     sv.decode_tps if sv else None, sv.prefix_cache_hit_rate if sv else None,
                     sv.spec_acceptance_rate if sv else None, s.ok if s else None, s.failed if s else None,
                     ",".join(p.flags)),
                )  # fmt: skip
            for r in m.scores:
                con.execute(
                    "INSERT OR REPLACE INTO scores VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (key, r.engine, r.variant, r.workload, r.pack, r.raw.score, r.adjusted.score,
                     r.adjusted.deployability, r.scored, r.scenarios_total),
                )  # fmt: skip
                for sc in r.scenarios:
                    con.execute(
                        "INSERT OR REPLACE INTO scenarios VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                        (key, r.engine, r.variant, r.workload, sc.scenario_id, sc.trial, sc.category,
                         sc.difficulty, sc.outcome, sc.raw_verdict, sc.adjusted_verdict,
                         int(sc.override is not None)),
                    )  # fmt: skip
    finally:
        con.close()
    return key


def run_dirs(runs_dir: Path) -> list[Path]:
    if not runs_dir.is_dir():
        return []
    return sorted(d for d in runs_dir.iterdir() if d.is_dir() and (d / "events.jsonl").is_file())


def rebuild(runs_dir: Path | str, db: Path | str | None = None) -> tuple[int, list[str]]:
    """Recreate the index from every run directory; returns (runs indexed, problems)."""
    runs_dir = Path(runs_dir)
    db = Path(db) if db is not None else runs_dir / DB_NAME
    if db.exists():
        db.unlink()
    connect(db).close()
    n, problems = 0, []
    for d in run_dirs(runs_dir):
        try:
            index_run(d, db)
            n += 1
        except Exception as exc:  # noqa: BLE001 - one bad run must not stop the rebuild
            problems.append(f"{d.name}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    return n, problems


def parse_since(text: str, now: float | None = None) -> float:
    """'7d', '12h', '30m', '2w', or an ISO date/time (UTC when no zone) -> unix seconds."""
    now = time.time() if now is None else now
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([mhdw])\s*", text)
    if m:
        mult = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}[m.group(2)]
        return now - float(m.group(1)) * mult
    try:
        dt = _dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise HistoryError(f"--since {text!r}: use e.g. 7d, 12h, 2026-12-01 or 2026-12-01T10:00") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=_dt.UTC)
    return dt.timestamp()


def query(db: Path | str, *, engine: str | None = None, workload: str | None = None,
          since: float | None = None, with_points: bool = True) -> list[dict[str, Any]]:  # fmt: skip
    """Runs (newest first) matching the filters, each with its matching points and scores."""
    con = connect(db)
    try:
        where: list[str] = []
        args: list[Any] = []
        if since is not None:
            where.append("COALESCE(started_ts, finished_ts, indexed_ts) >= ?")
            args.append(since)
        pw: list[str] = []
        pargs: list[Any] = []
        if engine:
            # "vllm" matches the engine, "vllm.mtp" the variant too
            eng, _, var = engine.partition(".")
            pw.append("engine = ?" + (" AND variant = ?" if var else ""))
            pargs += [eng, var] if var else [eng]
        if workload:
            pw.append("workload = ?")
            pargs.append(workload)
        if pw:
            where.append(f"run_key IN (SELECT run_key FROM points WHERE {' AND '.join(pw)})")
            args += pargs
        sql = "SELECT * FROM runs" + (f" WHERE {' AND '.join(where)}" if where else "")
        sql += " ORDER BY COALESCE(started_ts, indexed_ts) DESC, run_key DESC"
        out = []
        for row in con.execute(sql, args):
            r = dict(row)
            if with_points:
                psql = "SELECT * FROM points WHERE run_key = ?" + (f" AND {' AND '.join(pw)}" if pw else "")
                r["points"] = [dict(x) for x in con.execute(psql + " ORDER BY point_id", [r["run_key"], *pargs])]
                ssql = "SELECT * FROM scores WHERE run_key = ?"
                sargs: list[Any] = [r["run_key"]]
                if engine:
                    eng, _, var = engine.partition(".")
                    ssql += " AND engine = ?" + (" AND variant = ?" if var else "")
                    sargs += [eng, var] if var else [eng]
                if workload:
                    ssql += " AND workload = ?"
                    sargs.append(workload)
                r["scores"] = [dict(x) for x in con.execute(ssql, sargs)]
            out.append(r)
        return out
    finally:
        con.close()


def scenario_rows(db: Path | str, run_key: str) -> list[dict[str, Any]]:
    con = connect(db)
    try:
        return [dict(x) for x in con.execute("SELECT * FROM scenarios WHERE run_key = ? ORDER BY scenario_id, "
                                             "engine, variant, trial", (run_key,))]  # fmt: skip
    finally:
        con.close()
